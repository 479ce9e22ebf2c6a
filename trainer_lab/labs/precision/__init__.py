"""precision: fp32, bf16 autocast and fp16 autocast without/with GradScaler where fp16 breaks."""

from __future__ import annotations

from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.context import LabContext, LabError

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
        ObservationSpec("finfo", "per dtype: max, eps, smallest_normal, smallest_subnormal, bits"),
        ObservationSpec(
            "underflow",
            "per mode: nonfinite_loss_steps, zero_grad_fraction, first/final_loss, "
            "backoffs, skipped_steps, final_scale, compute_dtype, seconds",
        ),
        ObservationSpec("overflow", "the same for the overflow setup"),
        ObservationSpec("finfo.*.*", "finfo.<float16|bfloat16|float32>.<max|eps|...>"),
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


def _close(a: float, b: float, rel: float = 0.05) -> bool:
    return abs(a - b) <= rel * abs(b)


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.precision.worker:main",
        {
            "steps": p["steps"],
            "seed": p["seed"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 80,
        },
    )
    events = run.events().get(0, [])
    limits = {
        e["dtype"]: {
            k: e[k] for k in ("max", "eps", "smallest_normal", "smallest_subnormal", "bits")
        }
        for e in events
        if e["event"] == "finfo"
    }
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for e in events:
        if e["event"] == "precision":
            fields = {
                k: v for k, v in e.items() if k not in ("event", "rank", "time", "setup", "mode")
            }
            results.setdefault(e["setup"], {})[e["mode"]] = fields
    if set(results) != {"underflow", "overflow"} or any(len(m) != 4 for m in results.values()):
        raise LabError("the worker did not report every setup and mode")
    run.observe("finfo", limits)
    run.observe("underflow", results["underflow"])
    run.observe("overflow", results["overflow"])
    under, over = results["underflow"], results["overflow"]
    fp16_tiny = limits["float16"]["smallest_subnormal"]
    run.check(
        "fp16_underflow_zeroes_gradients",
        under["fp16"]["zero_grad_fraction"] >= 0.5 and under["fp32"]["zero_grad_fraction"] <= 0.01,
        f"share of gradient entries exactly 0: fp16 {under['fp16']['zero_grad_fraction']:.1%}, "
        f"fp32 {under['fp32']['zero_grad_fraction']:.1%} (fp16's smallest subnormal is "
        f"{fp16_tiny:.3g})",
    )
    s = under["fp16_scaler"]
    run.check(
        "scaler_restores_gradients",
        s["final_scale"] is not None
        and s["zero_grad_fraction"] <= 0.01
        and _close(s["final_loss"], under["fp32"]["final_loss"]),
        f"fp16 + GradScaler: {s['zero_grad_fraction']:.1%} zero grads, final loss "
        f"{s['final_loss']:.4g} vs fp32 {under['fp32']['final_loss']:.4g} (fp16 alone "
        f"{under['fp16']['final_loss']:.4g}); scale ended at {s['final_scale']}",
    )
    run.check(
        "fp16_overflow_goes_nonfinite",
        over["fp16"]["nonfinite_loss_steps"] > 0,
        f"fp16 without scaler: {over['fp16']['nonfinite_loss_steps']} of {p['steps']} losses "
        f"inf/NaN (fp16 max {limits['float16']['max']:g}); fp32: "
        f"{over['fp32']['nonfinite_loss_steps']}",
    )
    o = over["fp16_scaler"]
    run.check(
        "scaler_backs_off_and_skips",
        o["final_scale"] is not None and o["backoffs"] > 0 and o["nonfinite_loss_steps"] == 0,
        f"fp16 + GradScaler: {o['backoffs']} back-offs ({o['skipped_steps']} steps skipped), "
        f"{o['nonfinite_loss_steps']} non-finite losses, scale ended at {o['final_scale']}",
    )
    stable = all(
        results[k]["bf16"]["nonfinite_loss_steps"] == 0
        and results[k]["bf16"]["zero_grad_fraction"]
        <= results[k]["fp32"]["zero_grad_fraction"] + 0.01
        and _close(results[k]["bf16"]["final_loss"], results[k]["fp32"]["final_loss"])
        for k in results
    )
    run.check(
        "bf16_stable",
        stable,
        "; ".join(
            f"{k}: bf16 final loss {results[k]['bf16']['final_loss']:.4g} vs fp32 "
            f"{results[k]['fp32']['final_loss']:.4g}, {results[k]['bf16']['nonfinite_loss_steps']} "
            f"non-finite, {results[k]['bf16']['zero_grad_fraction']:.1%} zero grads"
            for k in results
        )
        + f" (bf16 max {limits['bfloat16']['max']:.3g}, eps {limits['bfloat16']['eps']:.3g})",
    )
