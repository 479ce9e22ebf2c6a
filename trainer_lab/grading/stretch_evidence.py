"""What the stretch checks read from a run (torch-free): the harness's probes (usercode/probes.py),
the steps wanted, and whether a relaunch resumed where the uninterrupted run was."""

from __future__ import annotations

from typing import Any

from trainer_lab.grading.checks_run import failed_run_detail, max_abs_diff
from trainer_lab.grading.stretch import (
    GRAD_RATIO_RANGE,
    STRETCH_KILLED_AFTER,
)
from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import (
    read_jsonl,
    save_events,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun

RESUME_TOLERANCE = 1e-6  # max |diff| over the sampled parameters after a resume


def probe_records(run: ScriptRun, rank: int, event: str) -> list[dict[str, Any]]:
    return [
        r
        for r in read_jsonl(run.observe_dir / protocol.probes_file(rank))
        if r.get("event") == event and isinstance(r.get("pstep"), int)
    ]


def backwards_by_step(run: ScriptRun, rank: int) -> dict[int, list[dict[str, Any]]]:
    """Optimizer step s (from 1) -> the backward passes made after step s-1, in order (the
    backward passes after the last step, if any, are under N+1)."""
    found: dict[int, list[dict[str, Any]]] = {}
    for r in probe_records(run, rank, "backward"):
        if isinstance(r.get("grad"), dict):
            found.setdefault(r["pstep"] + 1, []).append(r)
    return found


def steps_wanted(run: ScriptRun) -> int:
    return int(run.launch.args[run.launch.args.index("--steps") + 1])


def not_finished(run: ScriptRun) -> str | None:
    return None if run.status == "ok" else failed_run_detail(run)


def ratio_verdict(ratio: float, what: str, too_high: str, too_low: str) -> tuple[bool, str]:
    low, high = GRAD_RATIO_RANGE
    if ratio > high:
        return False, f"{what} ({ratio:.2f}x); expected about 1x; likely cause: {too_high}"
    if ratio < low:
        return False, f"{what} ({ratio:.2f}x); expected about 1x; likely cause: {too_low}"
    return True, f"{what} ({ratio:.2f}x, expected about 1x)"


def was_killed(run: ScriptRun) -> bool:
    return any(e["event"] == "killed" for e in save_events(run.observe_dir, run.ranks()))


def real_steps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The optimizer steps that could change something: torch.distributed.checkpoint's
    get_state_dict / set_state_dict create a fresh optimizer's state with a step on zero
    gradients (learning rate 0), which the recorder sees as a step that changed nothing."""
    return [
        r
        for r in records
        if not (
            r["pre"].get("digest") == r["post"].get("digest")
            and not (r.get("grad") or {}).get("norm")
        )
    ]


def _resumed_at(reference: list[dict[str, Any]], relaunch: list[dict[str, Any]]) -> int | None:
    known = {rec["post"]["digest"]: rec["pstep"] for rec in reference}
    if reference and isinstance(reference[0].get("pre"), dict):
        known.setdefault(reference[0]["pre"]["digest"], 0)
    if not relaunch or not isinstance(relaunch[0].get("pre"), dict):
        return None
    return known.get(relaunch[0]["pre"]["digest"])


def resumed_matches(
    reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun, expected: tuple[int, ...]
) -> tuple[bool, str, int | None]:
    """Every rank of the relaunch starts from the reference's parameters (this rank's shard)
    after an optimizer step in `expected` (the first is the one named) and matches it after
    every later step: (ok, evidence, the step it resumed after)."""
    if not was_killed(killed):
        return False, f"rank 1 was never killed: {failed_run_detail(killed)}", None
    if relaunch.status != "ok":
        return False, f"the relaunch: {failed_run_detail(relaunch)}", None
    resumed_at: int | None = None
    exact = True
    for rank in reference.ranks():
        u = real_steps(step_records(reference.observe_dir, rank))
        r = real_steps(step_records(relaunch.observe_dir, rank))
        resumed = _resumed_at(u, r)
        if resumed not in expected:
            seen = "no step of the uninterrupted run" if resumed is None else f"step {resumed}"
            return (
                False,
                (
                    f"rank {rank} resumed from the parameters after {seen}, expected optimizer "
                    f"step {expected[0]} (the newest checkpoint before the kill); likely cause: "
                    "its parameters (its shard, under FSDP2) were not loaded from the newest "
                    "checkpoint"
                ),
                resumed,
            )
        resumed_at = resumed
        by_step = {rec["pstep"]: rec for rec in u}
        for i, rec in enumerate(r, start=1):
            base = by_step.get(resumed + i)
            if base is None:
                return False, f"rank {rank} made more steps than the uninterrupted run", resumed
            if rec["post"]["digest"] != base["post"]["digest"]:
                exact = False
                diff = max_abs_diff(rec["post"], base["post"])
                if diff > RESUME_TOLERANCE:
                    return (
                        False,
                        (
                            f"rank {rank}: after step {resumed + i} the parameters differ from "
                            f"the uninterrupted run's (max |diff| {diff:.3g} over a sample); "
                            "expected them equal; likely cause: state missing from the checkpoint "
                            "(optimizer "
                            "state, RNG state, sampler position)"
                        ),
                        resumed,
                    )
        if len(r) != len(u) - resumed:
            return (
                False,
                (f"rank {rank} made {len(r)} steps after the resume, expected {len(u) - resumed}"),
                resumed,
            )
    how = "bit for bit" if exact else f"within {RESUME_TOLERANCE:g}"
    return (
        True,
        (
            f"rank 1 SIGKILLed after step {STRETCH_KILLED_AFTER}, relaunched: every rank resumed "
            f"from its parameters after step {resumed_at} and matched the uninterrupted run after "
            f"every later step ({how})"
        ),
        resumed_at,
    )
