"""activation-checkpointing lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError


def drive(run: LabContext) -> None:
    p = run.params
    top = p["max_depth"]
    depths = sorted({max(1, top // 4), max(1, top // 2), top})
    cfg = TrainConfig(
        model="gpt", vocab=64, seq_len=p["seq_len"], n_head=2, d_model=p["d_model"], n_layer=top
    )
    run.plan(1)
    run.launch(
        "trainer_lab.labs.activation_checkpointing.worker:main",
        {
            "config": cfg.to_dict(),
            "depths": depths,
            "batch": p["batch"],
            "timed_steps": p["timed_steps"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 80,
        },
    )
    table: dict[int, dict[str, dict[str, Any]]] = {}
    for e in run.events().get(0, []):
        if e["event"] == "activation":
            fields = {
                k: v
                for k, v in e.items()
                if k not in ("event", "rank", "time", "depth", "checkpointing")
            }
            table.setdefault(e["depth"], {})[e["checkpointing"]] = fields
    if sorted(table) != depths or any(len(v) != 2 for v in table.values()):
        raise LabError("the worker did not measure every depth and mode")
    run.observe("depths", {str(d): v for d, v in table.items()})
    attention = {e["seq_len"]: e for e in run.events().get(0, []) if e["event"] == "attention"}
    if len(attention) != 2:
        raise LabError("the worker did not measure attention at two sequence lengths")
    short, long = (attention[t] for t in sorted(attention))
    for kind in ("math", "sdpa"):
        run.observe(
            f"attention.{kind}.saved_bytes", {str(t): e[kind] for t, e in attention.items()}
        )
        run.observe(
            f"attention.{kind}.growth_at_2x_seq", round(long[kind] / max(short[kind], 1), 3)
        )
    lo, hi = depths[0], depths[-1]
    per_block = {
        mode: (table[hi][mode]["saved_bytes"] - table[lo][mode]["saved_bytes"]) / (hi - lo)
        for mode in ("none", "per_block")
    }
    run.observe("bytes_per_block.none", per_block["none"])
    run.observe("bytes_per_block.per_block", per_block["per_block"])
    plain, ckpt = table[hi]["none"], table[hi]["per_block"]
    saved_ratio = ckpt["saved_bytes"] / max(plain["saved_bytes"], 1)
    flops_ratio = ckpt["flops"] / max(plain["flops"], 1)
    time_ratio = ckpt["step_ms"] / max(plain["step_ms"], 1e-9)
    run.observe("saved_ratio", round(saved_ratio, 4))
    run.observe("flops_ratio", round(flops_ratio, 4))
    run.observe("step_time_ratio", round(time_ratio, 3))
    # linear growth: the middle depth sits on the line through the two ends (within 10 %)
    mid = depths[len(depths) // 2]
    b = {d: table[d]["none"]["saved_bytes"] for d in depths}
    predicted = b[lo] + per_block["none"] * (mid - lo)
    linear = per_block["none"] > 0 and abs(b[mid] - predicted) <= 0.1 * b[mid]
    growth = b[hi] / max(b[lo], 1)
    run.check(
        "memory_grows_with_depth",
        linear and growth >= 0.5 * hi / lo,
        "saved bytes without checkpointing: "
        + ", ".join(f"depth {d}: {b[d] / 1e6:.2f} MB" for d in depths)
        + f" ({per_block['none'] / 1e3:.0f} kB per block)",
    )
    run.check(
        "checkpointing_cuts_saved_bytes",
        saved_ratio <= 1 / 3,
        f"depth {hi}: {plain['saved_bytes'] / 1e6:.2f} MB -> {ckpt['saved_bytes'] / 1e6:.2f} MB "
        f"saved ({saved_ratio:.1%}); per block {per_block['none'] / 1e3:.0f} kB -> "
        f"{per_block['per_block'] / 1e3:.0f} kB (the block's input only)",
    )
    math_growth = long["math"] / max(short["math"], 1)
    sdpa_growth = long["sdpa"] / max(short["sdpa"], 1)
    run.check(
        "fused_attention_saves_linear_memory",
        math_growth >= 3.5 and sdpa_growth <= 2.5,
        f"attention saved bytes, seq {short['seq_len']} -> {long['seq_len']}: math "
        f"{short['math'] / 1e3:.0f} -> {long['math'] / 1e3:.0f} kB (x{math_growth:.2f}, the "
        f"score matrix), SDPA {short['sdpa'] / 1e3:.0f} -> {long['sdpa'] / 1e3:.0f} kB "
        f"(x{sdpa_growth:.2f})",
    )
    twice = ckpt["block_forwards"]["backward"] == hi and plain["block_forwards"]["backward"] == 0
    run.check(
        "recompute_costs_a_forward",
        twice and 1.15 <= flops_ratio <= 1.34,
        f"depth {hi}: block forwards during backward {plain['block_forwards']['backward']} -> "
        f"{ckpt['block_forwards']['backward']}; FLOPs x{flops_ratio:.3f} (a block's forward is "
        f"1/3 of its forward + backward); median step time x{time_ratio:.2f} "
        f"({plain['step_ms']:.1f} -> {ckpt['step_ms']:.1f} ms)",
    )
