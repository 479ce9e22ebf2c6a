"""nan-hunt: a corrupt sample, the non-finite guard, anomaly detection, LR spikes, clipping."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="nan-hunt",
    group="failures",
    summary=(
        "A corrupt sample at step K makes the loss non-finite; the grad-norm history before "
        "it; a non-finite guard agreed by all ranks skips the step and reports the sample id; "
        "anomaly detection names the backward op; a high LR without warmup spikes the "
        "grad norm, and clipping bounds SGD's update (not Adam's)."
    ),
    params=(
        ParamSpec(
            "corrupt_step",
            "int",
            12,
            "K: the step whose batch holds the corrupt sample",
            minimum=2,
            maximum=60,
        ),
        ParamSpec("steps", "int", 20, "DDP steps", minimum=3, maximum=100),
        ParamSpec(
            "corrupt_value",
            "choice",
            "inf",
            "value written into one feature",
            choices=("inf", "nan"),
        ),
        ParamSpec(
            "lr_steps", "int", 30, "steps of each LR / clipping run", minimum=10, maximum=200
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_corruption (clean data), no_guard (step taken anyway), warmup (the "
            "no-warmup run warms up), no_clip (the clipped run does not clip)",
            choices=("none", "no_corruption", "no_guard", "warmup", "no_clip"),
        ),
    ),
    observations=(
        ObservationSpec(
            "corrupt_sample_id", "the sample id that was corrupted (-1: none)", derived=True
        ),
        ObservationSpec(
            "first_nonfinite_step", "first step whose global loss is non-finite (0: none)"
        ),
        ObservationSpec("grad_norm_history", "rank 0's grad norm per step before K"),
        ObservationSpec("skipped_steps", "steps the guard skipped"),
        ObservationSpec("reported_sample_ids", "sample ids the guard reported"),
        ObservationSpec("nonfinite_after_k", "steps after K whose loss is non-finite"),
        ObservationSpec(
            "nonfinite_lag_steps",
            "first non-finite step - K (0: the corrupt batch itself; null: never non-finite)",
        ),
        ObservationSpec(
            "guard_named_corrupt_sample", "the guard reported exactly the corrupted sample id"
        ),
        ObservationSpec("anomaly.op", "backward op anomaly detection named"),
        ObservationSpec("anomaly.first_nonfinite_module", "first module with non-finite output"),
        ObservationSpec("anomaly.message", "the anomaly-mode error's first line"),
        ObservationSpec("lr", "per run: first/max grad norm, max update norm, final loss"),
        ObservationSpec("lr.*.*", "lr.<adam_no_warmup|adam_warmup|adam_clip|sgd_*>.<field>"),
        ObservationSpec("spike_ratio.no_warmup", "AdamW, no warmup: max / first grad norm"),
        ObservationSpec("spike_ratio.warmup", "AdamW with warmup: max / first grad norm"),
    ),
    checks=(
        CheckSpec("corrupt_sample_breaks_loss", "the loss is finite before K, non-finite at K"),
        CheckSpec(
            "guard_skips_and_names_sample",
            "only step K skipped, its sample id reported, training finite after",
        ),
        CheckSpec("anomaly_names_op", "anomaly detection names a backward op for the sample"),
        CheckSpec(
            "lr_spike_without_warmup", "no warmup: grad norm >= 10x its start; warmup: 5x less"
        ),
        CheckSpec("clipping_bounds_update", "SGD update norm <= lr * max_norm with clipping"),
    ),
    timeout_s=90.0,
)
