"""elastic-restart lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError
from trainer_lab.events import steps_of

TASK = "trainer_lab.labs.elastic_restart.worker:main"


def _attempts(
    run: LabContext, checkpoint_every: int, variant: str | None
) -> tuple[Any, dict[int, list[dict[str, Any]]]]:
    """One torchrun launch of the crashing job, saving every `checkpoint_every` steps."""
    p = run.params
    cfg = TrainConfig(
        steps=p["steps"],
        checkpoint_every=checkpoint_every,
        grad_sync="explicit" if run.world_size > 1 else "none",
        global_batch=4 * run.world_size,
        n_samples=32 * run.world_size,
    )
    spec = {
        "config": cfg.to_dict(),
        "collective_timeout_s": 15,
        "checkpoint_dir": str(run.run_dir(variant) / "checkpoints"),
        "crash_step": p["crash_step"],
        "resume": p["resume"],
    }
    # torchrun shares one TCPStore across restart rounds by default, and the restarted ranks
    # can read the previous attempt's gloo addresses from it ("Connection refused" in
    # connectFullMesh). A store per round avoids that.
    env = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"} if p["fresh_store"] else None
    result = run.launch(
        TASK,
        spec,
        variant=variant,
        max_restarts=p["max_restarts"],
        env=env,
        expect_failure=p["max_restarts"] == 0,
    )
    return result, run.events(variant)


SAVED_S = 1e-4  # a step whose checkpoint phase took longer wrote a save (else it is ~1 us)


def _cost(rank0: list[dict[str, Any]], redone: set[int]) -> dict[str, float]:
    """Saves rank 0 wrote and seconds it spent on them (every attempt), and the seconds of the
    steps it later trained again."""
    phases = [r["phases"]["checkpoint"] for r in steps_of(rank0) if r.get("run") != "reference"]
    saving = sum(phases)
    lost = sum(
        sum(r["phases"].values()) for r in steps_of(rank0, "attempt-0") if r["step"] in redone
    )
    saves = sum(1 for t in phases if t >= SAVED_S)
    return {"saves": saves, "checkpoint_s": round(saving, 4), "redone_s": round(lost, 4)}


def _compare(run: LabContext, every: int, base: dict[str, float]) -> None:
    """The same crash with checkpoints every `every` steps: saves against redone work."""
    _, events = _attempts(run, every, "compare")
    rank0 = events.get(0, [])
    attempts = sorted({e["attempt"] for e in rank0 if e["event"] == "attempt"})
    first = {r["step"] for r in steps_of(rank0, "attempt-0")}
    last = {r["step"] for r in steps_of(rank0, f"attempt-{max(attempts, default=0)}")}
    redone = first & last if len(attempts) > 1 else set()
    run.observe("compare.checkpoint_every", every)
    run.observe("compare.redone_steps", len(redone))
    cost = _cost(rank0, redone)
    for key, value in cost.items():
        run.observe(f"compare.{key}", value)
    for name, key in (("save_time_ratio", "checkpoint_s"), ("saves_ratio", "saves")):
        ratio = cost[key] / base[key] if base[key] > 0 else None
        run.observe(f"compare.{name}", None if ratio is None else round(ratio, 3))


def drive(run: LabContext) -> None:
    p = run.params
    if p["crash_step"] >= p["steps"]:
        raise LabError(f"crash_step {p['crash_step']} must be below steps {p['steps']}")
    run.plan(2 if p["compare_every"] else 1)
    result, events = _attempts(run, p["checkpoint_every"], None)
    rank0 = events.get(0, [])
    attempts = sorted(
        {e["attempt"] for evs in events.values() for e in evs if e["event"] == "attempt"}
    )
    restarts = max(attempts, default=0)
    last = f"attempt-{restarts}"
    reference = {r["step"]: r for r in steps_of(rank0, "reference")}
    by_attempt: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for record in steps_of(rank0):
        by_attempt[record.get("run", "")][record["step"]] = record
    final_run = by_attempt.get(last, {})
    resumed = [e for e in rank0 if e["event"] == "resumed"]
    resumed_step = resumed[-1]["step"] if resumed else 0
    first_run = by_attempt.get("attempt-0", {})
    redone_set = set(first_run) & set(final_run) if restarts else set()
    redone = len(redone_set)
    final_loss = final_run[max(final_run)]["loss"] if final_run else None
    ref_loss = reference[max(reference)]["loss"] if reference else None
    diffs = [abs(final_run[s]["loss"] - reference[s]["loss"]) for s in final_run if s in reference]
    crash = [e for evs in events.values() for e in evs if e["event"] == "crash"]
    gap = None
    if final_run and restarts:
        resumed_at = min(r["time"] for r in final_run.values())
        before = [e["time"] for e in crash if e["time"] < resumed_at]
        gap = round(resumed_at - max(before), 3) if before else None
    expected = (p["crash_step"] // p["checkpoint_every"]) * p["checkpoint_every"]
    final_diff = (
        abs(final_loss - ref_loss) if final_loss is not None and ref_loss is not None else None
    )
    cost = _cost(rank0, redone_set)
    for key, value in cost.items():
        run.observe(key, value)
    if p["compare_every"]:
        _compare(run, p["compare_every"], cost)
    run.observe("restarts", restarts)
    run.observe("crash_step", p["crash_step"])
    run.observe("resumed_from_step", resumed_step)
    run.observe("redone_steps", redone)
    run.observe("final_loss", final_loss)
    run.observe("reference_final_loss", ref_loss)
    run.observe("final_loss_diff", final_diff)
    run.observe("max_loss_diff_after_resume", max(diffs) if diffs else None)
    run.observe("restart_gap_s", gap)
    run.observe("duration_s", round(result.duration_s, 3))
    finished = max(final_run, default=0) == p["steps"]
    run.check(
        "job_restarted",
        restarts >= 1 and finished and bool(crash),
        f"{restarts} restart(s) after the crash at step {p['crash_step']}; the last attempt "
        f"reached step {max(final_run, default=0)} of {p['steps']}",
    )
    run.check(
        "resumed_from_latest_checkpoint",
        resumed_step == expected and redone == p["crash_step"] - expected,
        f"resumed from step {resumed_step} (latest save at or before step {p['crash_step']}: "
        f"{expected}); {redone} step(s) redone",
    )
    tol = p["tolerance"]
    run.check(
        "final_loss_matches",
        final_diff is not None and final_diff <= tol,
        f"final loss {final_loss!r} vs uncrashed {ref_loss!r} (diff {final_diff!r}, "
        f"tolerance {tol:g})",
    )
