"""ddp-buckets lab: the driver (torch-free): buckets per iteration, their order and overlap."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext, LabError
from trainer_lab.labs.ddp_buckets import MODES

CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}  # gloo on CPU tensors: the count must not hang on a GPU
ONE_BUCKET_MB = 1000.0


def summarise(iterations: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Observations of one mode from its per-iteration bucket records (launch order)."""
    if len(iterations) < 2 or not all(iterations):
        raise LabError("the comm hook saw no bucket in some iteration")
    first, last = iterations[0], iterations[-1]
    total = first[0]["of"]

    def overlapped(buckets: list[dict[str, Any]]) -> int:
        return sum(1 for b in buckets if b["ready"] < total)

    def layout(buckets: list[dict[str, Any]]) -> list[list[int]]:
        return [b["layers"] for b in buckets]

    elements = sum(b["numel"] for b in first)
    return {
        "buckets_per_iteration": [len(buckets) for buckets in iterations],
        "first_buckets": len(first),
        "later_buckets": len(last),
        "first_overlapped": overlapped(first),
        "later_overlapped": overlapped(last),
        "first_bucket_share": round(first[0]["numel"] / elements, 4),
        "first_launch_layers": first[0]["layers"],
        "later_launch_layers": last[0]["layers"],
        "layout_changed": layout(first) != layout(last),
    }


def drive(run: LabContext) -> None:
    p = run.params
    swap = p["sabotage"] == "swap_modes"
    spec = {
        "layers": p["layers"],
        "width": p["width"],
        "iterations": p["iterations"],
        "bucket_cap_mb": ONE_BUCKET_MB if p["sabotage"] == "one_bucket" else p["bucket_cap_mb"],
        "modes": {"default": swap, "find_unused": not swap},
        "collective_timeout_s": 30,
    }
    run.plan(1)
    run.launch("trainer_lab.labs.ddp_buckets.worker:main", spec, env=CPU_ONLY)
    modes = run.report("ddp_buckets")["modes"]
    if set(modes) != set(MODES):
        raise LabError(f"the worker reported modes {sorted(modes)}, expected {list(MODES)}")
    last_layer = p["layers"] - 1
    seen = {mode: summarise(modes[mode]) for mode in MODES}
    for mode, values in seen.items():
        for name, value in values.items():
            run.observe(f"{mode}.{name}", value)
    d, f = seen["default"], seen["find_unused"]
    run.check(
        "default_first_iteration_one_bucket",
        d["first_buckets"] == 1 and d["first_overlapped"] == 0,
        f"iteration 0: {d['first_buckets']} bucket(s), {d['first_overlapped']} launched before "
        f"the last gradient was ready",
    )
    run.check(
        "default_rebuilds_in_ready_order",
        d["later_buckets"] > 1
        and last_layer in d["later_launch_layers"]
        and d["later_overlapped"] >= 1,
        f"buckets per iteration {d['buckets_per_iteration']}; the last iteration's first bucket "
        f"holds layers {d['later_launch_layers']}, {d['later_overlapped']} bucket(s) overlap "
        f"backward",
    )
    run.check(
        "find_unused_keeps_reverse_order",
        f["first_buckets"] > 1
        and last_layer in f["first_launch_layers"]
        and not f["layout_changed"],
        f"buckets per iteration {f['buckets_per_iteration']}; iteration 0's first bucket holds "
        f"layers {f['first_launch_layers']}; layout changed: {f['layout_changed']}",
    )
