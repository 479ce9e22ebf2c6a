"""uneven lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext
from trainer_lab.events import steps_of
from trainer_lab.launcher import LaunchResult

TASK = "trainer_lab.labs.uneven.worker:main"


def _launch(run: LabContext, cfg: TrainConfig, parts: list[str], variant: str) -> LaunchResult:
    p = run.params
    spec = {
        "config": cfg.to_dict(),
        "collective_timeout_s": p["collective_timeout_s"],
        "join": p["join"],
        "parts": parts,
        "batches": p["batches"],
        "extra_batches": p["extra_batches"],
    }
    return run.launch(TASK, spec, variant=variant, expect_failure=True)


def _finals(events: dict[int, list[dict[str, Any]]], label: str) -> dict[int, str]:
    return {
        r: e["weights_digest"]
        for r, evs in events.items()
        for e in evs
        if e["event"] == "final" and e["run"] == label
    }


def drive(run: LabContext) -> None:
    p = run.params
    cfg = TrainConfig(global_batch=4 * run.world_size, n_samples=64 * run.world_size, steps=0)
    batches = {
        r: p["batches"] + (p["extra_batches"] if r == 0 else 0) for r in range(run.world_size)
    }
    run.observe("batches_per_rank", {str(r): n for r, n in batches.items()})
    # One launch: the Join part, then the part without Join (which is expected to hang, so it
    # goes last). Only when the Join part itself does not finish is a second launch needed.
    run.plan(1)
    first = _launch(run, cfg, ["join", "nojoin"], "uneven")
    events = run.events("uneven")
    steps = {r: len(list(steps_of(events.get(r, []), "join"))) for r in range(run.world_size)}
    finals = _finals(events, "join")
    completed = len(finals) == run.world_size and all(steps[r] == batches[r] for r in batches)
    equal = completed and len(set(finals.values())) == 1
    run.observe("join.completed", completed)
    run.observe("join.steps_per_rank", {str(r): n for r, n in steps.items()})
    run.observe("join.weights_equal", equal)
    join_cause = "" if completed or first.root_cause is None else f"; {first.root_cause}"
    run.check(
        "with_join_completes",
        completed,
        f"steps per rank {steps} for batches {batches}{join_cause}",
    )
    run.check(
        "with_join_weights_equal",
        equal,
        f"{len(set(finals.values()))} distinct final weight digest(s) from {len(finals)} of "
        f"{run.world_size} ranks",
    )
    plain, variant = first, "uneven"
    if not completed:
        run.plan(2)
        plain, variant = _launch(run, cfg, ["nojoin"], "nojoin"), "nojoin"
        events = run.events(variant)
    failed = not plain.ok
    rank0_steps = [e["time"] for e in steps_of(events.get(0, []), "nojoin")]
    failure = next((f for f in plain.failures if f["rank"] == 0), None)
    secs = round(failure["time"] - max(rank0_steps), 3) if failure and rank0_steps else None
    error = str(plain.root_cause) if plain.root_cause else None
    run.observe("nojoin.failed", failed)
    run.observe("nojoin.error", (error or "")[:300] or None)
    run.observe("nojoin.seconds_to_failure", secs)
    run.observe("duration_s", round(sum(x["duration_s"] for x in run.launches), 3))
    run.check(
        "without_join_fails",
        failed,
        f"without Join the launch ended {plain.status}"
        + (f" {secs} s after rank 0's last step: {error[:200]}" if error else ""),
    )
