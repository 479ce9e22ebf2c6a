"""memory-math: bytes per parameter of training state, measured tensor by tensor."""

from __future__ import annotations

from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

# The classic mixed-precision breakdown (Micikevicius et al. 2018; ZeRO, Rajbhandari et al.
# 2020): fp16 weights 2 + fp16 grads 2 + fp32 master weights 4 + Adam m 4 + Adam v 4.
CLASSIC = {"fp16_weights": 2, "fp16_grads": 2, "fp32_master": 4, "adam_m": 4, "adam_v": 4}

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
        ObservationSpec("params", "parameters of the model"),
        ObservationSpec(
            "fp32.bytes_per_param.total", "fp32 + AdamW: persistent bytes / param", "B"
        ),
        ObservationSpec("fp32.bytes_per_param.weights", "fp32 weights / param", "B"),
        ObservationSpec("fp32.bytes_per_param.grads", "fp32 grads / param", "B"),
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
        ObservationSpec("classic_mixed_precision", "the classic fp16 + fp32 master breakdown"),
        ObservationSpec("classic_mixed_precision.*", "one term of it (B/param) or its total"),
        ObservationSpec("*.params", "parameters (per setup)"),
        ObservationSpec("*.param_tensors", "parameter tensors (Adam keeps a step scalar each)"),
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


def _near(value: float, target: float, tol: float) -> bool:
    return target <= value <= target + tol


def drive(run: LabContext) -> None:
    p = run.params
    if p["model"] == "gpt":
        cfg = TrainConfig(model="gpt", vocab=256, seq_len=32, n_layer=4, n_head=4, d_model=128)
    else:
        cfg = TrainConfig(model="mlp", d_in=64, hidden=512, depth=4, d_out=8)
    run.plan(1)
    run.launch(
        "trainer_lab.labs.memory_math.worker:main",
        {
            "config": cfg.to_dict(),
            "optimizer": p["optimizer"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 80,
        },
    )
    found: dict[str, dict[str, Any]] = {
        e["setup"]: {k: v for k, v in e.items() if k not in ("event", "rank", "time", "setup")}
        for e in run.events().get(0, [])
        if e["event"] == "memory"
    }
    if set(found) != {"fp32", "bf16_autocast", "bf16_pure"}:
        raise LabError(f"the worker reported setups {sorted(found)}")
    run.observe("params", found["fp32"]["params"])
    for setup, values in found.items():
        run.observe(setup, values)
    run.observe("classic_mixed_precision", {**CLASSIC, "total": sum(CLASSIC.values())})
    tol = p["tolerance"]
    f = found["fp32"]["bytes_per_param"]
    run.check(
        "fp32_adam_is_16_bytes",
        _near(f["weights"], 4, tol)
        and _near(f["grads"], 4, tol)
        and _near(f["optimizer"], 8, tol)
        and _near(f["total"], 16, tol),
        f"{found['fp32']['params']} params, {p['optimizer']}: weights {f['weights']:.3f} + grads "
        f"{f['grads']:.3f} + optimizer {f['optimizer']:.3f} = {f['total']:.3f} B/param"
        + (
            f" (the extra {1e3 * (f['optimizer'] % 1):.2f} mB/param are Adam's scalar step "
            "tensors, one per parameter tensor)"
            if p["optimizer"] == "adamw"
            else ""
        ),
    )
    a = found["bf16_autocast"]
    b = a["bytes_per_param"]
    run.check(
        "autocast_keeps_fp32_state",
        _near(b["total"], 16, tol)
        and a["weight_dtype"] == "float32"
        and a["grad_dtype"] == "float32"
        and 0 < a["transient_weight_copies_per_param"] <= 2,
        f"bf16 autocast: {a['weight_dtype']} weights {b['weights']:.3f} + {a['grad_dtype']} grads "
        f"{b['grads']:.3f} + optimizer {b['optimizer']:.3f} = {b['total']:.3f} B/param, plus "
        f"{a['transient_weight_copies_per_param']:.2f} B/param of bf16 weight copies held for "
        f"backward; classic fp16 mixed precision: 2 + 2 + 4 + 4 + 4 = 16; the model cast to "
        f"bf16: {found['bf16_pure']['bytes_per_param']['total']:.3f} B/param",
    )
