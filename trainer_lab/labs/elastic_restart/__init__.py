"""elastic-restart: torchrun --max-restarts brings a crashed job back; it resumes from the
latest committed checkpoint and ends with the same loss as a run that never crashed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError
from trainer_lab.events import steps_of

TASK = "trainer_lab.labs.elastic_restart.worker:main"

SPEC = LabSpec(
    name="elastic-restart",
    group="failures",
    summary=(
        "A worker raises after step K; torchrun --max-restarts restarts every rank (the whole "
        "group, not just the failed one); the new attempt resumes from the latest committed "
        "checkpoint, redoes the steps since, and ends with the same loss as an uncrashed run."
    ),
    params=(
        ParamSpec("steps", "int", 12, "optimizer steps", minimum=4, maximum=200),
        ParamSpec("checkpoint_every", "int", 4, "save every N steps", minimum=1, maximum=100),
        ParamSpec("crash_step", "int", 7, "rank W-1 raises after this step", minimum=1),
        ParamSpec(
            "max_restarts",
            "int",
            1,
            "torchrun --max-restarts; debug 0: no restart, the crash ends the job (the lab "
            "then expects the failed launch and judges it), so job_restarted must fail",
            minimum=0,
            maximum=5,
        ),
        ParamSpec(
            "fresh_store",
            "bool",
            True,
            "set TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 (a rendezvous store per restart round); "
            "false reuses torchrun's shared store, whose stale keys can break the restart",
        ),
        ParamSpec("tolerance", "float", 0.0, "allowed final-loss difference", minimum=0.0),
        ParamSpec(
            "resume",
            "choice",
            "full",
            "full: restore model, optimizer, scheduler, sampler, RNG; debug model_only: "
            "weights only (fresh Adam, restarted LR/data), so the loss check must fail; "
            "scratch: ignore checkpoints and start over",
            choices=("full", "model_only", "scratch"),
        ),
    ),
    observations=(
        ObservationSpec("restarts", "torchrun restarts of the worker group"),
        ObservationSpec("crash_step", "the step after which a worker crashed"),
        ObservationSpec("resumed_from_step", "the checkpoint step the new attempt resumed from"),
        ObservationSpec("redone_steps", "steps trained twice (crash step - checkpoint step)"),
        ObservationSpec("final_loss", "last-step loss of the restarted run (rank 0)"),
        ObservationSpec("reference_final_loss", "last-step loss of the uncrashed run (rank 0)"),
        ObservationSpec("final_loss_diff", "|final_loss - reference_final_loss|"),
        ObservationSpec("max_loss_diff_after_resume", "max per-step loss difference after resume"),
        ObservationSpec("restart_gap_s", "crash -> first step of the new attempt", "s"),
        ObservationSpec("duration_s", "wall time of the launch, restart included", "s"),
    ),
    checks=(
        CheckSpec("job_restarted", "the group was restarted and the job finished"),
        CheckSpec("resumed_from_latest_checkpoint", "resume step = last save at or before K"),
        CheckSpec("final_loss_matches", "final loss equals the uncrashed run's"),
    ),
    timeout_s=90.0,
)


def drive(run: LabContext) -> None:
    p = run.params
    if p["crash_step"] >= p["steps"]:
        raise LabError(f"crash_step {p['crash_step']} must be below steps {p['steps']}")
    cfg = TrainConfig(
        steps=p["steps"],
        checkpoint_every=p["checkpoint_every"],
        grad_sync="explicit" if run.world_size > 1 else "none",
        global_batch=4 * run.world_size,
        n_samples=32 * run.world_size,
    )
    run.plan(1)
    spec = {
        "config": cfg.to_dict(),
        "collective_timeout_s": 15,
        "checkpoint_dir": str(run.out_dir / "checkpoints"),
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
        max_restarts=p["max_restarts"],
        env=env,
        expect_failure=p["max_restarts"] == 0,
    )
    events = run.events()
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
    redone = len(set(first_run) & set(final_run)) if restarts else 0
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
