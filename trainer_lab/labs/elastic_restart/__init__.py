"""elastic-restart: torchrun --max-restarts brings a crashed job back; it resumes from the
latest committed checkpoint and ends with the same loss as a run that never crashed."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

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
            "compare_every",
            "int",
            0,
            "when not 0: the same crash again with a save every compare_every steps, to set "
            "the time spent saving against the work redone (observations compare.*)",
            minimum=0,
            maximum=100,
        ),
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
        ObservationSpec("saves", "checkpoint saves rank 0 wrote, all attempts (timed steps)"),
        ObservationSpec("checkpoint_s", "rank 0's time in checkpoint saves, all attempts", "s"),
        ObservationSpec("redone_s", "rank 0's time in the steps it had to train again", "s"),
        ObservationSpec(
            "compare.checkpoint_every", "compare_every: the other save interval", derived=True
        ),
        ObservationSpec("compare.redone_steps", "steps trained twice at that interval"),
        ObservationSpec("compare.saves", "saves written at that interval"),
        ObservationSpec("compare.saves_ratio", "saves at compare_every / at checkpoint_every"),
        ObservationSpec("compare.checkpoint_s", "time in checkpoint saves at that interval", "s"),
        ObservationSpec("compare.redone_s", "time in redone steps at that interval", "s"),
        ObservationSpec(
            "compare.save_time_ratio", "time in saves at compare_every / at checkpoint_every"
        ),
    ),
    checks=(
        CheckSpec("job_restarted", "the group was restarted and the job finished"),
        CheckSpec("resumed_from_latest_checkpoint", "resume step = last save at or before K"),
        CheckSpec("final_loss_matches", "final loss equals the uncrashed run's"),
    ),
    timeout_s=90.0,
)
