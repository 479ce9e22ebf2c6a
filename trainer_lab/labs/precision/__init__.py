"""precision: fp32, bf16 autocast and fp16 autocast without/with GradScaler where fp16 breaks."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="precision",
    group="correctness",
    summary=(
        "fp32, bf16 autocast, fp16 autocast without and with GradScaler on setups that provoke "
        "fp16 underflow (a small loss term: gradients flush to zero) and overflow (unnormalised "
        "inputs: inf/NaN); scaler back-offs and skipped steps; bf16 stays stable. Numeric "
        "limits come from torch.finfo. Runs on CPU: torch's CPU autocast supports float16 and "
        "bfloat16, and GradScaler('cpu') exists."
    ),
    params=(
        ParamSpec("steps", "int", 40, "optimizer steps per mode and setup", minimum=8, maximum=400),
        ParamSpec("seed", "int", 0, "model init seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: benign removes the provocation; no_scaler disables the GradScaler; "
            "bf16_is_fp16 runs the bf16 mode in float16",
            choices=("none", "benign", "no_scaler", "bf16_is_fp16"),
        ),
    ),
    observations=(
        ObservationSpec(
            "finfo", "per dtype: max, eps, smallest_normal, smallest_subnormal, bits", derived=True
        ),
        ObservationSpec(
            "underflow",
            "per mode: nonfinite_loss_steps, zero_grad_fraction, first/final_loss, "
            "backoffs, skipped_steps, final_scale, compute_dtype, seconds",
        ),
        ObservationSpec("overflow", "the same for the overflow setup"),
        ObservationSpec(
            "finfo.*.*", "finfo.<float16|bfloat16|float32>.<max|eps|...>", derived=True
        ),
        ObservationSpec("underflow.*.*", "underflow.<fp32|bf16|fp16|fp16_scaler>.<field>"),
        ObservationSpec("overflow.*.*", "overflow.<mode>.<field>"),
    ),
    checks=(
        CheckSpec("fp16_underflow_zeroes_gradients", "fp16 without scaler: most grads exactly 0"),
        CheckSpec("scaler_restores_gradients", "fp16 + GradScaler: grads and loss like fp32"),
        CheckSpec("fp16_overflow_goes_nonfinite", "fp16 without scaler: inf/NaN losses"),
        CheckSpec(
            "scaler_backs_off_and_skips", "fp16 + GradScaler: back-offs, weights stay finite"
        ),
        CheckSpec("bf16_stable", "bf16: finite, no zeroed grads, loss within 5 % of fp32"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=90.0,
)
