"""The FSDP2-first round: fully_shard per block, a sharded DCP checkpoint, and a resume at
another world size (2 -> 3) that keeps the global batch and the data position (torch-free; its
given files are in fsdp2_files/).

    grading = grade_fsdp2(Path("train.py"), run_dir, phases=("sharded",))

Graded by the coding round's harness: the launches are built by grader.launch_for and run
through grader.run_launches (the usercode runner, the same limits and faults), the checks are
checks_fsdp2_prompt.py's, on what the harness recorded (never on what the script says of
itself, except the step lines' losses), the result a lab result like the DDP round's.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.grading.data_plans import group_seed
from trainer_lab.grading.graded_table import graded_table
from trainer_lab.grading.prompts.checks_fsdp2_prompt import (
    BLOCKS,
    CHECK_NAMES_RESHARD,
    DATASET_SIZE,
    GLOBAL_BATCH,
    NORM_TOLERANCE,
    dcp_checks,
    reshard_checks,
    sharded_checks,
)
from trainer_lab.grading.prompts.evaluation import chain_head
from trainer_lab.grading.prompts.prompt_grading import Launches, PromptSpec, prompt_grader
from trainer_lab.result import Check, variant_dir
from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun
from trainer_lab.usercode.verdict import check

FILES = Path(__file__).parent / "fsdp2_files"
LAB = "mock-coding-fsdp2"
SCRIPT_NAME = "train.py"
STEPS = 20
CKPT_EVERY = 4
# after step 13 the newest checkpoint is step 12: 2 steps into an epoch (5 steps an epoch), and
# "step-12" sorts before "step-8" by name
KILL_AFTER = 3 * CKPT_EVERY + 1
NEWEST_CKPT = (KILL_AFTER // CKPT_EVERY) * CKPT_EVERY
TEAR_AFTER = NEWEST_CKPT  # the save after step 12 is torn: the newest complete one is step 8
NEWEST_COMPLETE = TEAR_AFTER - CKPT_EVERY
ONE_STEPS = 3  # the one-process reference's steps
NO_SAVE = 1000
TIMEOUT_S = 120.0  # per launch

PHASES = ("sharded", "dcp", "reshard")
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "sharded": ("sharded.per_block", "sharded.trains"),
    "dcp": ("dcp.every_rank_writes", "dcp.atomic"),
    "reshard": CHECK_NAMES_RESHARD,
}

# phase -> its row of the "How it is graded" table (trainer_lab.grading.graded_table)
GRADED: dict[str, str] = {
    "sharded": f"""\
W=2, N={STEPS}, C={CKPT_EVERY}: exits 0 after N optimizer steps on every rank. The
parameters the optimizer steps are DTensors, each rank holds about 1/W of the
model, the shards add up to it; every backward issues at least {BLOCKS + 1} collectives
on every rank, among them a reduce-scatter of each block's gradient (its
size) and none of several blocks' at once (a root-only fully_shard issues one,
of the whole model). The loss falls (rank 0's mean over epoch 1 against the
last whole epoch); step 1's gradient norm over the shards
is one process's on the same global batch (x0.6-1.6). Every global batch is {GLOBAL_BATCH}
samples, every epoch reads each sample once""",
    "dcp": f"""\
in that W=2 run's save after step {CKPT_EVERY} (its files, also those written while the
next steps run) every rank's shard (a .distcp file) is written by
torch.distributed.checkpoint itself, one rank writes its .metadata and DIR holds
it. A W=2 run whose rank 1 is SIGKILLed while
its shard of the save after step {TEAR_AFTER} is half written is relaunched at W=2:
it resumes from the parameters after step {NEWEST_COMPLETE} (the newest complete
checkpoint) and makes the remaining steps""",
    "reshard": f"""\
a W=2 run, one rank SIGKILLed after step {KILL_AFTER}, is relaunched at W=3: every
rank starts from the uninterrupted run's model after step {NEWEST_CKPT} (the whole
model's norm over the shards, within 1e-6; after step {NEWEST_CKPT - CKPT_EVERY} when that save
was still being written at the kill) and makes the remaining steps. Relaunch
step j trains on the uninterrupted run's global batch of step {NEWEST_CKPT} + j, each
rank {GLOBAL_BATCH // 3} of it; after every step the whole model's norm is the
uninterrupted run's (within {NORM_TOLERANCE:.0e} relative)""".replace("e-0", "e-"),
}

CONTRACT = f"""\
Train with FSDP2 first: shard the model per block, checkpoint it sharded, and resume at another
world size, in one file, train.py.

Given: drill_data.py: `TrainSet()` ({DATASET_SIZE} samples; item i is (i, x, y): 8 features, a
float32 target of shape (1,)), `Model()` (an input layer, `model.blocks`: {BLOCKS} Blocks, an
output layer) and GLOBAL_BATCH ({GLOBAL_BATCH}). Import them, never write their values. Seed
before you build the Model (the same weights on every rank and in every run). Use a
torch.optim optimizer and mean squared error.

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C` (one process, no
     process group needed) and under `torchrun --nproc-per-node W` (gloo on CPU), train until
     global step N and print from rank 0 one JSON line per step: {{"step": 7, "loss": 0.41}};
  2. under torchrun, shard with FSDP2: `fully_shard` each Block, then the root, over a 1-D CPU
     mesh, and build the optimizer on the sharded parameters;
  3. train each step on one global batch of GLOBAL_BATCH samples at any W (GLOBAL_BATCH // W per
     rank): step s (from 1) trains on positions (s-1)*G .. s*G-1 of its epoch's order, every
     sample once per epoch, the order a function of the epoch only (not of W). Read a sample
     through the dataset only when you train on it (the grader observes the reads);
  4. after every C-th step save a sharded checkpoint with torch.distributed.checkpoint (every
     rank writes its own shard; the model, the optimizer state and the step) into DIR, so that a
     crash in the middle of a save never leaves a checkpoint a restart would load;
  5. when started again, at the same or another W, resume by itself from the newest complete
     checkpoint: the same parameters, optimizer state, step and data position, the run going on
     as if it had not stopped. Under torchrun, destroy the process group at the end.

How it is graded (real runs, observed from outside):
{graded_table(GRADED)}"""


def given_file(name: str) -> str:
    return (FILES / name).read_text()


def launch_plans(seed: int) -> dict[str, LaunchPlan]:
    """Every launch of the round; the killed rank is drawn from the grading's seed."""
    base = LaunchPlan("train", 2, STEPS, CKPT_EVERY, data="train")
    kill_rank = random.Random(seed).choice((0, 1))
    plans = (
        base,
        # one process served the uninterrupted run's first global batches, step by step
        LaunchPlan("one", 0, ONE_STEPS, NO_SAVE, data="train", replays="train"),
        replace(base, name="kill", kill=(kill_rank, KILL_AFTER)),
        replace(base, name="resume", world_size=3, continues="kill"),
        replace(base, name="torn", tear_after_step=TEAR_AFTER, tear_rank=1),
        replace(base, name="torn-resume", continues="torn"),
    )
    return {plan.name: plan for plan in plans}


PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "sharded": ("train", "one"),
    "dcp": ("train", "torn", "torn-resume"),
    "reshard": ("train", "kill", "resume"),
}


def to_launch(
    plan: LaunchPlan,
    plans: dict[str, LaunchPlan],
    script: Path,
    out_dir: Path,
    seed: int,
    timeout_s: float = TIMEOUT_S,
) -> ScriptLaunch:
    """A relaunch is served its run's samples, with no poisoned reads (dataplan.py): its ranks
    are not the killed run's (rank 2 read nothing there)."""
    from trainer_lab.grading.grader import launch_for

    replay_dir = None
    if plan.replays:
        replay_dir = str(variant_dir(out_dir, plan.replays) / protocol.OBSERVE_DIR)
    data = DataPlan(
        seed=group_seed(seed, plan.data),
        replay_dir=replay_dir,
        replay_world=max(plans[plan.replays].world_size, 1) if plan.replays else 1,
    )
    ckpt_of = chain_head(plans, plan.name)
    return launch_for(plan, script, out_dir, timeout_s, seed=seed, ckpt_of=ckpt_of, data=data)


def phase_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    missing = [n for n in PHASE_LAUNCHES[phase] if n not in runs]
    if missing:
        return [
            check(n, False, f"not run: {missing}", {"not_run": True}) for n in CHECK_NAMES[phase]
        ]
    if phase == "sharded":
        return sharded_checks(runs["train"], runs["one"], STEPS)
    if phase == "dcp":
        return dcp_checks(
            runs["train"], runs["torn"], runs["torn-resume"], CKPT_EVERY, NEWEST_COMPLETE
        )
    return reshard_checks(runs["train"], runs["kill"], runs["resume"], NEWEST_CKPT, CKPT_EVERY)


SPEC = PromptSpec(
    LAB, PHASES, CHECK_NAMES, SCRIPT_NAME, (FILES / "drill_data.py",), PHASE_LAUNCHES, phase_checks
)


def _launches(seed: int, out_dir: Path, timeout_s: float) -> Launches:
    plans = launch_plans(seed)
    return Launches(
        plans,
        lambda plan, script: to_launch(plan, plans, script, out_dir, seed, timeout_s),
        lambda runs: {"kill": plans["kill"].kill},
    )


grade_fsdp2 = prompt_grader(SPEC, _launches, TIMEOUT_S)
"""Grade the script as this round's train.py; write out_dir/result.json."""
