"""grad-accum: K micro-batches under no_sync equal one K-times larger batch, with K-1 fewer
all-reduces per step (counted by a DDP communication hook)."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="grad-accum",
    group="correctness",
    summary=(
        "Gradient accumulation: K micro-batches with DDP no_sync (loss / K) give the same "
        "gradients and weights as one batch K times larger, with one bucket all-reduce round "
        "per step instead of K (counted through a DDP communication hook)."
    ),
    params=(
        ParamSpec(
            "micro_batches", "int", 4, "K: micro-batches per optimizer step", minimum=2, maximum=16
        ),
        ParamSpec(
            "micro_batch", "int", 4, "samples per micro-batch per rank", minimum=1, maximum=64
        ),
        ParamSpec("steps", "int", 6, "optimizer steps", minimum=1, maximum=50),
        ParamSpec("tolerance", "float", 1e-5, "allowed relative gradient difference", minimum=0.0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: sync_every_micro drops no_sync (K all-reduce rounds); no_loss_scale forgets "
            "loss / K (gradients K times too large)",
            choices=("none", "sync_every_micro", "no_loss_scale"),
        ),
    ),
    observations=(
        ObservationSpec("allreduces_per_step.big", "bucket all-reduces per step, one big batch"),
        ObservationSpec("allreduces_per_step.accum", "the same, K micro-batches with no_sync"),
        ObservationSpec("allreduces_per_step.naive", "the same, K micro-batches without no_sync"),
        ObservationSpec("saved_allreduce_rounds", "(naive - accum) / buckets per step: K-1"),
        ObservationSpec("buckets", "gradient buckets of the model (all-reduces per sync round)"),
        ObservationSpec("max_rel_grad_diff.accum", "max |g_accum - g_big| / max |g_big|"),
        ObservationSpec("max_rel_grad_diff.naive", "the same without no_sync"),
        ObservationSpec("max_weight_diff.accum", "max |w_accum - w_big| after the last step"),
        ObservationSpec("max_loss_diff", "max |loss_accum - loss_big| over steps"),
    ),
    checks=(
        CheckSpec("accum_equals_big_batch", "gradients and weights within tolerance"),
        CheckSpec("k_minus_1_fewer_allreduces", "no_sync: one sync round per step, naive: K"),
    ),
    timeout_s=90.0,
)
