"""mfu-ladder lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext, LabError
from trainer_lab.labs.mfu_ladder.report import observe_rungs
from trainer_lab.labs.mfu_ladder.rungs import RUNG_NAMES, flops_per_token


def _shape(p: dict[str, Any], prefix: str, vocab: int) -> dict[str, Any]:
    from trainer_lab.config import TrainConfig

    if p[f"{prefix}d_model"] % p[f"{prefix}n_head"]:
        raise LabError(f"{prefix}d_model must be divisible by {prefix}n_head")
    cfg = TrainConfig(
        model="gpt",
        vocab=vocab,
        seq_len=p[f"{prefix}seq_len"],
        n_layer=p[f"{prefix}n_layer"],
        n_head=p[f"{prefix}n_head"],
        d_model=p[f"{prefix}d_model"],
    )
    return {
        "config": cfg.to_dict(),
        "batch": p[f"{prefix}batch"],
        "big_batch_factor": p[f"{prefix}big_batch_factor"],
    }


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.mfu_ladder.worker:main",
        {
            "cpu": _shape(p, "", 256),
            "gpu": _shape(p, "gpu_", 32768),
            "cpu_compile": p["cpu_compile"],
            "warmup_steps": p["warmup_steps"],
            "timed_steps": p["timed_steps"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": max(60.0, run.remaining_s()),
        },
    )
    events = run.events().get(0, [])
    found = {kind: [e for e in events if e["event"] == kind] for kind in ("flop_count", "peak")}
    rungs = [e for e in events if e["event"] == "rung"]
    if not found["flop_count"] or not found["peak"] or len(rungs) != len(RUNG_NAMES):
        raise LabError(f"the worker reported {len(rungs)} of {len(RUNG_NAMES)} rungs")
    counted, peak = found["flop_count"][-1], found["peak"][-1]
    first = next(r for r in rungs if "step_times_s" in r)
    layers, heads = p["gpu_n_layer"], p["gpu_n_head"]
    d = p["gpu_d_model"]
    if counted["device"] == "cpu":
        layers, heads, d = p["n_layer"], p["n_head"], p["d_model"]
    flops = flops_per_token(
        counted["matmul_params"], layers, heads, d // heads, first["seq_len"], p["sabotage"]
    )
    run.observe("device", counted["device"])
    run.observe("cuda_visible_devices", counted["cuda_visible_devices"])
    for key in ("params", "matmul_params"):
        run.observe(key, counted[key])
    run.observe("peak_flops", peak["peak_flops"])
    run.observe("peak_source", peak["peak_source"])
    for key, value in flops.items():
        run.observe(f"flops_per_token.{key}", value)
    _check_counter(run, counted, flops, layers, heads, d, first["seq_len"])
    observe_rungs(run, rungs, flops["total"], peak["peak_flops"])


def _ops(counts: dict[str, float], names: tuple[str, ...]) -> float:
    return sum(n for op, n in counts.items() if any(name in op for name in names))


ATTENTION_OPS = ("bmm", "scaled_dot_product", "flash", "efficient_attention", "cudnn_attention")


def _check_counter(
    run: LabContext,
    counted: dict[str, Any],
    flops: dict[str, int],
    layers: int,
    heads: int,
    d: int,
    seq_len: int,
) -> None:
    math = counted["math"]
    dense = _ops(math, ("aten.mm", "aten.addmm"))
    attention = _ops(math, ATTENTION_OPS)
    sdpa_attention = _ops(counted["sdpa"], ATTENTION_OPS)
    run.observe("counted.dense", dense)
    run.observe("counted.attention", attention)
    run.observe("counted.sdpa_attention", sdpa_attention)
    run.observe("counted.attention_share", round(attention / (dense + attention), 4))
    dense_ratio = flops["dense"] / dense if dense else float("inf")
    run.observe("dense_formula_vs_counted", round(dense_ratio, 4))
    run.check(
        "dense_term_matches_counter",
        abs(dense_ratio - 1) <= 0.02,
        f"6N = {flops['dense']:,} FLOPs/token vs {dense:,.0f} counted in matmuls "
        f"(x{dense_ratio:.3f}; N = {counted['matmul_params']:,} matmul weights of "
        f"{counted['params']:,} parameters)",
    )
    attention_ratio = flops["attention"] / attention if attention else float("inf")
    run.observe("attention_formula_vs_counted", round(attention_ratio, 4))
    sdpa_note = f"the counter saw {sdpa_attention:,.0f} in the SDPA model's attention" + (
        " (it has no formula for this device's SDPA kernel)" if not sdpa_attention else ""
    )
    run.check(
        "attention_term_matches_counter",
        abs(attention_ratio - 1) <= 0.02,
        f"12 x L {layers} x H {heads} x Q {d // heads} x T {seq_len} = {flops['attention']:,} "
        f"FLOPs/token vs {attention:,.0f} counted in the written-out attention's bmm; " + sdpa_note,
    )
    # activation checkpointing: the forward of every block runs again in backward
    total = sum(math.values())
    recomputed = sum(counted["math_checkpointing"].values())
    ratio = recomputed / total if total else 0.0
    # N = 12 L d^2 in the blocks + d V in the head; forward FLOPs per token of each part
    head_forward = 2 * (counted["matmul_params"] - 12 * layers * d * d)
    blocks_forward = 24 * layers * d * d + 4 * layers * heads * (d // heads) * seq_len
    bound = 1 + blocks_forward / (3 * (blocks_forward + head_forward))
    run.observe("counted.checkpointing_ratio", round(ratio, 4))
    run.observe("counted.full_recompute_ratio", round(bound, 4))
    run.check(
        "checkpointing_recomputes_forward",
        1.05 <= ratio <= bound + 1e-6,
        f"with checkpointing the counter sees {ratio:.3f}x the FLOPs of one forward + backward "
        f"(at most {bound:.3f}x if every block's forward ran again; non-reentrant checkpointing "
        f"stops recomputing once backward has what it needs). MFU counts the model's FLOPs "
        f"only; HFU counts the recompute too",
    )
