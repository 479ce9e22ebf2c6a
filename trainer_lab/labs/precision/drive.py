"""precision lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext, LabError


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
