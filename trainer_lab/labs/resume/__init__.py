"""resume: SIGKILL at step K, resume in five ways, compare with an uninterrupted run."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

MODES = ("full", "weights_only", "fresh_optimizer", "no_rng", "no_scheduler")

SPEC = LabSpec(
    name="resume",
    group="correctness",
    summary=(
        "SIGKILL every rank at step K, resume from the last committed checkpoint with full "
        "state, weights only, fresh optimizer, no RNG restore, no scheduler restore; compare "
        "each with an uninterrupted run."
    ),
    params=(
        ParamSpec("steps", "int", 20, "total steps of every run", minimum=6, maximum=200),
        ParamSpec("resume_step", "int", 8, "checkpoint step K", minimum=2, maximum=190),
        ParamSpec(
            "grad_sync",
            "choice",
            "ddp",
            "ddp (DistributedDataParallel) or explicit (one fixed-order all-reduce)",
            choices=("ddp", "explicit"),
        ),
        ParamSpec(
            "dropout", "float", 0.1, "dropout, so RNG state matters", minimum=0.0, maximum=0.9
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: full_without_rng leaves the RNG out of the 'full' mode, so the full-state "
            "check must fail",
            choices=("none", "full_without_rng"),
        ),
    ),
    observations=(
        ObservationSpec("resume_step", "checkpoint step K", "steps", derived=True),
        ObservationSpec("killed_step", "last step the killed run logged", "steps"),
        ObservationSpec("killed_by_signal", "the killed launch died of SIGKILL (bool)"),
        ObservationSpec("uninterrupted_repeatable", "two uninterrupted runs bit-identical"),
        *(
            obs
            for mode in MODES
            for obs in (
                ObservationSpec(
                    f"modes.{mode}.first_diff_step",
                    "first step whose loss differs from uninterrupted (null: none)",
                    "steps",
                ),
                ObservationSpec(f"modes.{mode}.max_abs_diff", "max |loss - uninterrupted loss|"),
                ObservationSpec(
                    f"modes.{mode}.loss_jump_ratio",
                    "largest loss / uninterrupted loss over steps K+1..K+3",
                ),
                ObservationSpec(f"modes.{mode}.bit_identical", "every loss identical (bool)"),
            )
        ),
        ObservationSpec("full_state_margin", "min broken-mode diff / full-state diff"),
    ),
    checks=(
        CheckSpec("killed_and_restored", "SIGKILL at K+2, last committed checkpoint is step K"),
        CheckSpec("uninterrupted_repeatable", "two uninterrupted runs are bit-identical"),
        CheckSpec(
            "full_state_resume_exact",
            "bit-identical (W=2 or explicit sync); at W>=3 with DDP within float rounding",
        ),
        CheckSpec(
            "broken_modes_detected",
            "each broken mode diverges within 3 steps of K, 100x above the full-state diff",
        ),
    ),
    timeout_s=120.0,
)
