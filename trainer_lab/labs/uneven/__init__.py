"""uneven: ranks with different numbers of batches. Without Join the run fails (a timeout in
the extra gradient all-reduce); with DDP's Join it completes and the weights are equal."""

from __future__ import annotations

from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext
from trainer_lab.events import steps_of
from trainer_lab.launcher import LaunchResult

TASK = "trainer_lab.labs.uneven.worker:main"

SPEC = LabSpec(
    name="uneven",
    group="failures",
    summary=(
        "Rank 0 has more batches than the others. Without Join the job fails: rank 0 waits in "
        "a gradient all-reduce nobody else joins, until the collective timeout. With DDP's "
        "Join the early ranks shadow the all-reduces, the job completes and every rank ends "
        "with the same weights."
    ),
    params=(
        ParamSpec("batches", "int", 4, "batches on every rank but rank 0", minimum=1, maximum=50),
        ParamSpec(
            "extra_batches",
            "int",
            2,
            "extra batches on rank 0 (0 makes the inputs even: the no-Join run then succeeds "
            "and its check fails)",
            minimum=0,
            maximum=50,
        ),
        ParamSpec(
            "collective_timeout_s", "float", 3.0, "process-group timeout", minimum=1, maximum=60
        ),
        ParamSpec(
            "join",
            "bool",
            True,
            "debug: false runs the 'with Join' launch without Join, so its checks must fail",
        ),
    ),
    observations=(
        ObservationSpec("batches_per_rank", "batches each rank had"),
        ObservationSpec("join.completed", "the Join launch finished (bool)"),
        ObservationSpec("join.steps_per_rank", "optimizer steps each rank ran with Join"),
        ObservationSpec("join.weights_equal", "final weights bit-identical on all ranks"),
        ObservationSpec("duration_s", "wall time of the launches", "s"),
        ObservationSpec("nojoin.failed", "the launch without Join failed (bool)"),
        ObservationSpec("nojoin.error", "first error without Join"),
        ObservationSpec("nojoin.seconds_to_failure", "last step -> failure, rank 0", "s"),
    ),
    checks=(
        CheckSpec("without_join_fails", "no Join: the run fails or times out"),
        CheckSpec("with_join_completes", "Join: every rank finishes its own batches"),
        CheckSpec("with_join_weights_equal", "Join: the final weights are equal on every rank"),
    ),
    timeout_s=90.0,
)


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
