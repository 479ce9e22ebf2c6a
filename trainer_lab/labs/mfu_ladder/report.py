"""Turn the worker's `rung` events into per-rung observations and the ladder's checks
(torch-free)."""

from __future__ import annotations

from statistics import median
from typing import Any

from trainer_lab.context import LabContext
from trainer_lab.labs.mfu_ladder.rungs import RUNGS, TOP_RUNG

# first-step logits against fp32_eager's, relative L2 distance: fp32 kernels agree to ~1e-6,
# bf16 autocast to ~3e-3; attention that sees the future is off by ~7e-2
SAME_MODEL_TOLERANCE = {"float32": 1e-3, "bfloat16 autocast": 2e-2}


def observe_rungs(
    run: LabContext,
    events: list[dict[str, Any]],
    flops_per_token: int,
    peak: float,
) -> None:
    by_name = {e["name"]: e for e in events}
    measured: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    for rung in RUNGS:
        event = by_name[rung.name]
        if event.get("skipped"):
            skipped[rung.name] = event["skipped"]
            continue
        timed = event["step_times_s"][event["warmup"] :]
        step_s = median(timed) if timed else float("nan")
        tokens_per_s = event["batch"] * event["seq_len"] / step_s
        measured[rung.name] = {
            "change": event["change"],
            "dtype": event["dtype"],
            "batch": event["batch"],
            "step_s": step_s,
            "first_step_s": event["step_times_s"][0],
            "tokens_per_s": tokens_per_s,
            "mfu": tokens_per_s * flops_per_token / peak,
            "logits_rel_diff": event["logits_rel_diff"],
            "warmup": event["warmup"],
            "timed": len(timed),
        }
    ladder = list(measured)
    base = measured[ladder[0]]["tokens_per_s"]
    previous = base
    for name, values in measured.items():
        values["speedup_vs_fp32"] = round(values["tokens_per_s"] / base, 3)
        values["speedup_vs_previous"] = round(values["tokens_per_s"] / previous, 3)
        if name != "activation_checkpointing":  # a side rung: the climb goes on from the top
            previous = values["tokens_per_s"]
    ac = measured.get("activation_checkpointing")
    if ac is not None:
        ratio = run.observations.get("counted", {}).get("checkpointing_ratio", 1.0)
        ac["hfu"] = ac["mfu"] * ratio  # hardware FLOPs: the recompute counts too
    run.observe("ladder", ladder)
    run.observe("skipped", skipped)
    for name, values in measured.items():
        shown = {k: v for k, v in values.items() if k not in ("warmup", "timed")}
        run.observe(f"rungs.{name}", shown)
    top = measured.get(TOP_RUNG)
    if top is not None:
        run.observe("top_rung", TOP_RUNG)
        run.observe("top_mfu", top["mfu"])
        run.observe("top_tokens_per_s", top["tokens_per_s"])
        run.observe("speedup_total", round(top["tokens_per_s"] / base, 3))
        if ac is not None:
            run.observe("checkpointing_cost", round(ac["tokens_per_s"] / top["tokens_per_s"], 3))
    oom = next((e.get("oom_batches") for e in events if e.get("oom_batches")), [])
    run.observe("oom_batches", oom)
    _checks(run, measured, skipped)


def _checks(run: LabContext, measured: dict[str, dict[str, Any]], skipped: dict[str, str]) -> None:
    wrong = {
        name: v["logits_rel_diff"]
        for name, v in measured.items()
        if v["logits_rel_diff"] is None or v["logits_rel_diff"] > SAME_MODEL_TOLERANCE[v["dtype"]]
    }
    diffs = ", ".join(
        f"{n} {v['logits_rel_diff']:.1e}" if v["logits_rel_diff"] is not None else f"{n} none"
        for n, v in measured.items()
        if n != "fp32_eager"
    )
    run.check(
        "rungs_compute_the_same_model",
        not wrong,
        f"first-step logits vs fp32_eager (relative): {diffs}"
        + (f"; beyond tolerance: {', '.join(wrong)}" if wrong else ""),
    )
    untimed = [n for n, v in measured.items() if v["warmup"] < 1 or v["timed"] < 1]
    run.check(
        "warmup_excluded",
        not untimed,
        (
            f"rungs timing their first step (allocation, autotuning, compilation): "
            f"{', '.join(untimed)}"
        )
        if untimed
        else "every rung timed "
        + ", ".join(sorted({f"{v['timed']} steps after {v['warmup']}" for v in measured.values()}))
        + " warm-up; first steps: "
        + ", ".join(f"{n} {1e3 * v['first_step_s']:.0f} ms" for n, v in measured.items()),
    )
    outside = [n for n, v in measured.items() if not 0 < v["mfu"] <= 1]
    rates = ", ".join(
        f"{n} {v['mfu']:.1%} ({v['tokens_per_s']:,.0f} tok/s)" for n, v in measured.items()
    )
    run.check(
        "mfu_in_range",
        bool(measured) and not outside,
        f"MFU: {rates}"
        + (f"; impossible (> 100 % or <= 0): {', '.join(outside)}" if outside else "")
        + (f"; skipped: {', '.join(skipped)}" if skipped else ""),
    )
