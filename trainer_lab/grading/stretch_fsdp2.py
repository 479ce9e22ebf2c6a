"""The fsdp2 stretch phase's checks (FSDP2 instead of DDP), from what the runs did."""

from __future__ import annotations

import math
from typing import Any

from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.grading.contract import BATCH_SIZE, DATASET_SIZE
from trainer_lab.grading.stretch import (
    CKPT_EVERY,
    STRETCH_KILLED_AFTER,
)
from trainer_lab.grading.stretch_evidence import (
    ratio_verdict,
    resumed_matches,
)
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    step_lines,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

# -- fsdp2 -----------------------------------------------------------------------------------


def fsdp2_sharded(run: ScriptRun, one: ScriptRun) -> tuple[bool, str]:
    records = {rank: step_records(run.observe_dir, rank) for rank in run.ranks()}
    if not all(records.values()):
        counts = {rank: len(r) for rank, r in records.items()}
        return False, f"optimizer steps seen per rank: {counts}"
    world = len(records)
    plain = [rank for rank, r in records.items() if not r[0]["post"].get("sharded")]
    if plain:
        return False, (
            f"the parameters the optimizer steps on rank {plain[0]} are plain tensors, not "
            "DTensors; expected FSDP2's sharded parameters; likely cause: the model is not "
            "fully_shard-ed, or the optimizer was built before fully_shard (it then holds the "
            "replaced, unsharded parameters)"
        )
    held = {rank: int(r[0]["post"].get("numel") or 0) for rank, r in records.items()}
    total = sum(held.values())
    whole = step_records(one.observe_dir, 0)
    model = int(whole[0]["post"].get("numel") or 0) if whole else None
    shares = ", ".join(f"rank {r}: {n}" for r, n in sorted(held.items()))
    text = f"DTensor parameters on {world} ranks; elements held {shares} (of {total})"
    most = max(held.values())
    if most > 1.5 * total / world:
        return False, (
            f"{text}; expected each rank to hold about 1/{world} of the model; likely cause: "
            "the parameters are replicated (a Replicate placement), not sharded"
        )
    if model is not None and total != model:
        return False, (
            f"{text}, the one-process run's model has {model}; expected the shards to add up "
            "to the whole model; likely cause: parameters replicated on some ranks, or not all "
            "parameters given to the optimizer"
        )
    return True, f"{text}, the whole model's count" if model else text


def _shard_norm(records: dict[int, list[dict[str, Any]]], key: str, step: int = 0) -> float:
    """The norm over all ranks' shards: sqrt of the sum of each rank's squared norm."""
    return math.sqrt(sum((r[step][key].get("norm") or 0.0) ** 2 for r in records.values()))


def loss_falls(run: ScriptRun, epoch: int) -> tuple[bool, str]:
    """The mean printed loss over the first epoch's steps (`epoch` steps an epoch) against the
    last whole epoch's: each epoch reads every sample once, so the means compare the model on
    the same samples (the first and last few steps did not: 1 grading in 12 of a right answer
    read a rise there)."""
    losses = [float(line["loss"]) for line in step_lines(run.stdout_path(0)).lines]
    if len(losses) < 2 * epoch or not all(math.isfinite(x) for x in losses):
        return False, f"need two epochs of finite losses from rank 0, got {len(losses)} steps"
    whole = len(losses) // epoch
    first = sum(losses[:epoch]) / epoch
    last = sum(losses[(whole - 1) * epoch : whole * epoch]) / epoch
    text = f"loss {first:.4g} -> {last:.4g} (mean over epoch 1 and over epoch {whole})"
    if last >= first:
        return False, f"{text}; expected it to fall; likely cause: no learning"
    return True, text


def fsdp2_learns(run: ScriptRun, const: ScriptRun, one: ScriptRun, epoch: int) -> tuple[bool, str]:
    """The loss falls (`epoch` optimizer steps an epoch in `run`) and step 1's gradient over
    the shards is one process's on the same global batch."""
    ok, text = loss_falls(run, epoch)
    for other in (const, one):
        if other.status != "ok":
            return False, f"{text}; {other.launch.name}: {failed_run_detail(other)}"
    records = {rank: step_records(const.observe_dir, rank) for rank in const.ranks()}
    whole = step_records(one.observe_dir, 0)
    if not all(records.values()) or not whole:
        return False, f"{text}; no optimizer step to compare with one process"
    if not all(r[0]["post"].get("sharded") for r in records.values()):
        return False, (
            f"{text}; the parameters at W=2 are not sharded (see fsdp2.sharded): not compared "
            "with one process"
        )
    start, start1 = _shard_norm(records, "pre"), whole[0]["pre"].get("norm") or 0.0
    if not math.isclose(start, start1, rel_tol=1e-5):
        return False, (
            f"{text}; the W=2 and one-process runs started from other weights (norm "
            f"{start:.6g} vs {start1:.6g}); expected the same initial weights; likely cause: the "
            "model's initialization is not seeded (or differs per rank)"
        )
    g, g1 = _shard_norm(records, "grad"), whole[0]["grad"].get("norm") or 0.0
    if not g1:
        return False, f"{text}; the one-process run's step-1 gradient is zero"
    same, detail = ratio_verdict(
        g / g1,
        f"step-1 gradient norm over the shards {g:.4g} at W=2 vs {g1:.4g} for one process on "
        "the same global batch",
        "gradients summed across ranks, not averaged (about W times)",
        "gradients divided by the world size twice (or by too much)",
    )
    if run.status != "ok":
        return False, f"{failed_run_detail(run)}; {text}; {detail}"
    return ok and same, f"{text}; {detail}"


def fsdp2_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["fsdp-w2"]
    ok, detail = fsdp2_sharded(run, runs["fsdp-one-const"])
    if run.status != "ok":
        ok, detail = False, f"{failed_run_detail(run)}; {detail}"
    checks = [check("fsdp2.sharded", ok, detail)]
    epoch = DATASET_SIZE // (run.launch.world_size * BATCH_SIZE)
    ok, detail = fsdp2_learns(run, runs["fsdp-const"], runs["fsdp-one-const"], epoch)
    checks.append(check("fsdp2.learns", ok, detail))
    expected = (STRETCH_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    ok, detail, _ = resumed_matches(run, runs["fsdp-kill"], runs["fsdp-resume"], (expected,))
    checks.append(check("fsdp2.resumes", ok, detail))
    return checks
