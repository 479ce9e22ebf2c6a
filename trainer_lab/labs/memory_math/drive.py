"""memory-math lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

# The classic mixed-precision breakdown (Micikevicius et al. 2018; ZeRO, Rajbhandari et al.
# 2020): fp16 weights 2 + fp16 grads 2 + fp32 master weights 4 + Adam m 4 + Adam v 4.
CLASSIC = {"fp16_weights": 2, "fp16_grads": 2, "fp32_master": 4, "adam_m": 4, "adam_v": 4}


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
