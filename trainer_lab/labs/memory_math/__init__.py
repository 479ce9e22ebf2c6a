"""memory-math: bytes per parameter of training state, measured tensor by tensor."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="memory-math",
    group="performance",
    summary=(
        "Bytes per parameter measured for fp32 + AdamW and bf16 autocast + AdamW, split into "
        "weights, gradients and optimizer state, next to the 16 B/param rule of thumb. "
        "PyTorch autocast keeps fp32 weights (they are the master copy) and fp32 grads, so it "
        "is 4 + 4 + 8 = 16 plus transient bf16 weight copies during forward/backward, not the "
        "classic 2 + 2 + 4 + 4 + 4 with fp16 weights and a separate fp32 master."
    ),
    params=(
        ParamSpec("model", "choice", "gpt", "the trainer's model option", choices=("gpt", "mlp")),
        ParamSpec(
            "optimizer",
            "choice",
            "adamw",
            "adamw, or sgd (momentum: 4 B/param of state)",
            choices=("adamw", "sgd"),
        ),
        ParamSpec("tolerance", "float", 0.05, "allowed B/param beyond the rule", minimum=0.0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: cast_model casts the model to bf16 in the autocast setup",
            choices=("none", "cast_model"),
        ),
    ),
    observations=(
        ObservationSpec("params", "parameters of the model", derived=True),
        ObservationSpec(
            "fp32.bytes_per_param.total", "fp32 + AdamW: persistent bytes / param", "B"
        ),
        ObservationSpec("fp32.bytes_per_param.weights", "fp32 weights / param", "B", derived=True),
        ObservationSpec("fp32.bytes_per_param.grads", "fp32 grads / param", "B", derived=True),
        ObservationSpec("fp32.bytes_per_param.optimizer", "AdamW exp_avg + exp_avg_sq + step", "B"),
        ObservationSpec(
            "bf16_autocast.bytes_per_param.total", "bf16 autocast + AdamW, persistent", "B"
        ),
        ObservationSpec(
            "bf16_autocast.transient_weight_copies_per_param",
            "bf16 weight copies autocast holds from forward until backward",
            "B",
        ),
        ObservationSpec("bf16_pure.bytes_per_param.total", "model cast to bf16 + AdamW", "B"),
        ObservationSpec(
            "classic_mixed_precision", "the classic fp16 + fp32 master breakdown", derived=True
        ),
        ObservationSpec(
            "classic_mixed_precision.*", "one term of it (B/param) or its total", derived=True
        ),
        ObservationSpec("*.params", "parameters (per setup)", derived=True),
        ObservationSpec(
            "*.param_tensors", "parameter tensors (Adam keeps a step scalar each)", derived=True
        ),
        ObservationSpec("*.weight_dtype", "dtype of the parameters"),
        ObservationSpec("*.grad_dtype", "dtype of the gradients"),
        ObservationSpec("*.bytes.*", "<setup>.bytes.<weights|grads|optimizer>", "B"),
        ObservationSpec("*.optimizer_bytes_by_state.*", "bytes per optimizer state key", "B"),
        ObservationSpec("*.bytes_per_param.*", "<setup>.bytes_per_param.<part|total>", "B"),
        ObservationSpec("*.transient_weight_copies_per_param", "bf16 copies in flight", "B"),
        ObservationSpec("*.saved_activation_bytes", "bytes autograd saved for backward", "B"),
        ObservationSpec("*.cuda_allocated", "torch.cuda.memory_allocated (None on CPU)", "B"),
    ),
    checks=(
        CheckSpec("fp32_adam_is_16_bytes", "fp32 + AdamW: 4 + 4 + 8 = 16 B/param"),
        CheckSpec(
            "autocast_keeps_fp32_state",
            "bf16 autocast + AdamW: still 16 B/param of fp32 state, plus bf16 copies in flight",
        ),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=90.0,
)
