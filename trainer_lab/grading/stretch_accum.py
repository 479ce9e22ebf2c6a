"""The accum stretch phase's checks (gradient accumulation), from what the runs did."""

from __future__ import annotations

from typing import Any

from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.grading.contract import BATCH_SIZE
from trainer_lab.grading.stretch import (
    ACCUM_K,
)
from trainer_lab.grading.stretch_evidence import (
    backwards_by_step,
    not_finished,
    ratio_verdict,
    steps_wanted,
)
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    fetches,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

# -- accum -----------------------------------------------------------------------------------


def accum_micro_batches(run: ScriptRun) -> tuple[bool, str]:
    wanted = steps_wanted(run)
    made = {rank: len(step_records(run.observe_dir, rank)) for rank in run.ranks()}
    if made[0] != wanted or len(set(made.values())) > 1:
        return False, (
            f"optimizer steps per rank: {made}, expected {wanted} (--steps) on every rank"
        )
    for rank in run.ranks():
        passes = backwards_by_step(run, rank)
        for step in range(1, wanted + 1):
            n = len(passes.get(step, []))
            if n != ACCUM_K:
                return False, (
                    f"step {step} on rank {rank} ran {n} backward passes, expected {ACCUM_K} "
                    f"(--accum-steps {ACCUM_K}); likely cause: --accum-steps not read, or "
                    "not one backward per micro-batch"
                )
        fetched = len(fetches(run.observe_dir, rank))
        low, high = wanted * ACCUM_K * BATCH_SIZE, (wanted * ACCUM_K + 1) * BATCH_SIZE
        if not low <= fetched <= high:
            return False, (
                f"rank {rank} fetched {fetched} samples in {wanted} steps, expected "
                f"{low} ({ACCUM_K} micro-batches of {BATCH_SIZE} per step); likely cause: "
                "the micro-batches do not each take a new batch"
            )
    return True, (
        f"{wanted} optimizer steps on {len(made)} ranks, each of {ACCUM_K} backward passes and "
        f"{ACCUM_K * BATCH_SIZE} samples per rank"
    )


def _same(digests: list[Any]) -> bool:
    return None not in digests and len(set(digests)) == 1


def accum_one_allreduce(run: ScriptRun) -> tuple[bool, str]:
    wanted = steps_wanted(run)
    ranks = run.ranks()
    passes = {rank: backwards_by_step(run, rank) for rank in ranks}
    steps = {rank: step_records(run.observe_dir, rank) for rank in ranks}
    checked = 0
    for step in range(1, wanted + 1):
        per_rank = [passes[rank].get(step, []) for rank in ranks]
        if any(len(p) != ACCUM_K for p in per_rank) or any(len(steps[r]) < step for r in ranks):
            return False, (
                f"step {step}: needs {ACCUM_K} backward passes and an optimizer step on every "
                "rank to see when the gradients were all-reduced (see accum.micro_batches)"
            )
        for i in range(ACCUM_K - 1):
            if _same([p[i]["grad"].get("digest") for p in per_rank]):
                return False, (
                    f"step {step}: after micro-batch {i + 1}'s backward the gradients were "
                    f"already identical on every rank: all-reduced there (about {ACCUM_K} "
                    "all-reduces per step instead of one); expected them to differ until the "
                    "last micro-batch; likely cause: the backward of micro-batches "
                    f"1..{ACCUM_K - 1} does not run under ddp.no_sync()"
                )
            if _same([p[i + 1].get("before") for p in per_rank]):
                return False, (
                    f"step {step}: between micro-batch {i + 1} and {i + 2} the gradients became "
                    "identical on every rank: an all-reduce after each micro-batch; expected "
                    "one all-reduce per step; likely cause: the gradients are all-reduced by "
                    "hand after every backward instead of once before the optimizer step"
                )
        at_step = [steps[r][step - 1]["grad"].get("digest") for r in ranks]
        if not _same(at_step):
            return False, (
                f"step {step}: the optimizer stepped with gradients that differ between ranks "
                "(never all-reduced); expected them identical at the step; likely cause: the "
                "last micro-batch's backward also runs under no_sync (or no all-reduce at all)"
            )
        checked += 1
    return True, (
        f"on all {checked} steps the ranks' gradients differed after (and between) micro-batches "
        f"1..{ACCUM_K - 1} and were identical at the optimizer step: one all-reduce per step"
    )


def accum_matches_large_batch(accum: ScriptRun, k1: ScriptRun) -> tuple[bool, str]:
    for run in (accum, k1):
        if run.status != "ok":
            return False, f"{run.launch.name}: {failed_run_detail(run)}"
    mine, theirs = step_records(accum.observe_dir, 0), step_records(k1.observe_dir, 0)
    if not mine or not theirs:
        return False, "no optimizer step to compare at K=1 and K=4"
    if mine[0]["pre"].get("digest") != theirs[0]["pre"].get("digest"):
        return False, (
            f"the runs at K={ACCUM_K} and K=1 started from other weights; expected the same "
            "initial weights; likely cause: the model's initialization is not seeded"
        )
    g, g1 = mine[0]["grad"].get("norm") or 0.0, theirs[0]["grad"].get("norm") or 0.0
    if not g1:
        return False, "the K=1 run's step-1 gradient is zero: nothing to compare"
    what = f"step-1 gradient norm {g:.4g} at K={ACCUM_K} vs {g1:.4g} at K=1 on the same samples"
    return ratio_verdict(
        g / g1,
        what,
        f"the micro-batch loss is not divided by K (the gradients of {ACCUM_K} micro-batches "
        "summed: about K times the large-batch step)",
        "the loss divided by K twice (or by too much)",
    )


def accum_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["accum-w2"]
    failed = not_finished(run)
    checks = []
    for name, judge in (
        ("accum.micro_batches", accum_micro_batches),
        ("accum.one_allreduce_per_step", accum_one_allreduce),
    ):
        ok, detail = judge(run)
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    ok, detail = accum_matches_large_batch(runs["accum-const"], runs["accum-k1-const"])
    checks.append(check("accum.matches_large_batch", ok, detail))
    return checks
