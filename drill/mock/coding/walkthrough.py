"""The model answer, phase by phase: the lines of trainer_lab/grading/files/train.py each round
phase writes (its `# phase: <id>` comments mark them) and a short walk-through of why they are
written that way, for the report.

    part = model_part("restart")      # ModelPart(phase_id, code, walkthrough)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drill.mock.coding import model_answer_source

MARKER = re.compile(r"^\s*# phase: ([a-z]+)\b")
ELISION = "..."

WALKTHROUGH: dict[str, str] = {
    "clarify": (
        "No code yet. The answer fixes what it assumes before writing any: one process per "
        "device launched by torchrun (gloo on CPU, so it runs anywhere), a restart of the whole "
        "job rather than of one rank, and success as checks anyone can run: the loss falls, each "
        "sample is seen once per epoch, a killed run resumes where it stopped."
    ),
    "skeleton": (
        "A plain `python train.py` must already train: the arguments are the contract's, a "
        "world of one needs no process group, and the loop is the textbook step (forward, "
        "zero_grad, backward, optimizer.step). The global step, not the epoch, drives the loop, "
        "so `--steps N` stops at exactly N also after a resume. The seed is fixed before the "
        "model is built, so every rank starts from identical weights."
    ),
    "distributed": (
        "torchrun sets RANK and WORLD_SIZE; init_process_group reads them. DistributedSampler "
        "gives each rank its own shard (num_replicas=world, rank=rank) and set_epoch(epoch) a new "
        "shuffle each epoch; drop_last keeps every rank at the same step count, so no rank waits "
        "in an all-reduce the others never reach. DDP averages the gradients inside backward, so "
        "the replicas stay identical. The loader gets its own generator: otherwise each new "
        "iterator draws from the global RNG and shifts the dropout masks. A monitored barrier "
        "before leaving names a rank that fell behind."
    ),
    "restart": (
        "A checkpoint holds everything the next step depends on: weights, optimizer state (Adam's "
        "moments), the global step (which fixes the sampler position: epoch and offset are "
        "divmod(step, steps_per_epoch)) and every rank's RNG state. The replicas are identical, "
        "so rank 0 alone writes, to a temp file renamed into place: a reader never sees half a "
        "file, and a run killed mid-write resumes from the previous one. On start the newest "
        "complete step-*.pt is loaded, before DDP wraps the model. Monitoring: rank 0 prints "
        "one JSON line per step with the loss averaged over ranks and the time of each phase "
        "(data, forward, backward, optimizer, checkpoint and log), so a slow phase shows."
    ),
    "pushback": (
        "No new code. The design decisions to defend are the ones above: why rank 0 writes alone "
        "(and when that stops scaling: sharded state needs torch.distributed.checkpoint), why "
        "the step is enough to restore the data position (and what a different world size on "
        "restart does to it), and which logged phase a straggler or a slow network shows in."
    ),
}


STRETCH_WALKTHROUGH: dict[str, str] = {
    "accum": (
        "K micro-batches make one optimizer step: the first K-1 backward passes run inside "
        "ddp.no_sync(), so gradients only accumulate locally, and the K-th all-reduces the sum "
        "once. Each micro-batch loss is divided by K, so the step equals one over the K-times "
        "larger batch; the step counter, the checkpoint and the log count optimizer steps."
    ),
    "amp": (
        "The forward pass and the loss run under autocast (bfloat16 on CPU) while the master "
        "weights and the optimizer stay in float32. The scaler multiplies the loss before "
        "backward, unscales before the step, skips a step whose gradients are not finite and "
        "shrinks its scale; its state is saved with the checkpoint, so a resume scales alike."
    ),
    "fsdp2": (
        "fully_shard on the submodules and the root over a 1-D mesh shards parameters, "
        "gradients and optimizer state; the optimizer is built after sharding, over the sharded "
        "parameters. Saving gathers nothing on one rank: torch.distributed.checkpoint writes "
        "each rank's shard, and loads them back into the same layout on resume."
    ),
    "throughput": (
        "samples_per_s is the global batch over measured wall time (all ranks' samples), taken "
        "over a window, so one slow step does not swing it. It is reported where it is measured "
        "and checked against what the run really did; the target is met by removing the step's "
        "waste (logging sync, needless copies), not by changing what is trained."
    ),
}


@dataclass(frozen=True)
class ModelPart:
    phase_id: str
    code: str  # the model answer's lines of this phase ("" for a phase without code)
    walkthrough: str


def split_by_phase(source: str) -> dict[str, str]:
    """Phase id -> the source's lines marked for it, in file order, the marker lines left out;
    parts that are not adjacent in the file are separated by an indented `...` line."""
    parts: dict[str, list[str]] = {}
    last_line: dict[str, int] = {}
    current: str | None = None
    for number, line in enumerate(source.splitlines()):
        found = MARKER.match(line)
        if found:
            current = found.group(1)
            continue
        if current is None:
            continue
        lines = parts.setdefault(current, [])
        if current in last_line and last_line[current] != number - 1 and lines:
            while lines and not lines[-1].strip():
                lines.pop()
            indent = len(line) - len(line.lstrip())
            lines.append(" " * indent + ELISION)
        if line.strip() or lines:
            lines.append(line)
        last_line[current] = number
    return {phase: "\n".join(lines).strip("\n") + "\n" for phase, lines in parts.items()}


def model_part(phase_id: str, source: str | None = None) -> ModelPart:
    """The model answer's lines for a round phase, or a stretch phase's whole model answer."""
    if phase_id in STRETCH_WALKTHROUGH:
        from trainer_lab.grading import stretch_model_answer

        try:
            code = stretch_model_answer(phase_id) if source is None else source
        except (OSError, KeyError, ValueError):
            code = ""
        return ModelPart(phase_id, code, STRETCH_WALKTHROUGH[phase_id])
    code = split_by_phase(model_answer_source() if source is None else source).get(phase_id, "")
    return ModelPart(phase_id, code, WALKTHROUGH.get(phase_id, ""))
