"""throughput-mfu lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError


def drive(run: LabContext) -> None:
    p = run.params
    for prefix in ("", "gpu_"):
        if p[f"{prefix}d_model"] % p[f"{prefix}n_head"]:
            raise LabError(f"{prefix}d_model must be divisible by {prefix}n_head")
    cfg = TrainConfig(
        model="gpt",
        vocab=256,
        seq_len=p["seq_len"],
        n_layer=p["n_layer"],
        n_head=p["n_head"],
        d_model=p["d_model"],
    )
    gpu_cfg = cfg.with_(
        vocab=32768,
        seq_len=p["gpu_seq_len"],
        n_layer=p["gpu_n_layer"],
        n_head=p["gpu_n_head"],
        d_model=p["gpu_d_model"],
    )
    run.plan(1)
    run.launch(
        "trainer_lab.labs.throughput_mfu.worker:main",
        {
            "config": cfg.to_dict(),
            "gpu_config": gpu_cfg.to_dict(),
            "batch": p["batch"],
            "gpu_batch": p["gpu_batch"],
            "warmup_steps": 2,
            "timed_steps": p["timed_steps"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 110,
        },
    )
    found = [e for e in run.events().get(0, []) if e["event"] == "throughput"]
    if not found:
        raise LabError("the worker reported no throughput")
    r = found[-1]
    for key in (
        "device",
        "cuda_visible_devices",
        "dtype",
        "compiled",
        "params",
        "matmul_params",
        "tokens_per_s",
        "mfu",
        "flops_per_token",
        "counted_flops_per_token",
        "counted_attention_flops_per_token",
        "achieved_flops",
        "peak_flops",
        "peak_source",
        "step_s",
        "batch",
        "seq_len",
    ):
        run.observe(key, r[key])
    flops = r["flops_per_token"]
    run.observe("attention_share", round(flops["attention"] / flops["total"], 4))
    counted = r["counted_flops_per_token"]
    share = r["counted_attention_flops_per_token"] / counted if counted else 0.0
    run.observe("counted_attention_share", round(share, 4))
    counted_dense = r["counted_flops_per_token"] - r["counted_attention_flops_per_token"]
    ratio = flops["dense"] / counted_dense if counted_dense else float("inf")
    run.observe("dense_vs_counted", round(ratio, 4))
    run.check(
        "dense_flops_match_counter",
        abs(ratio - 1) <= 0.05,
        f"6N = {flops['dense']:,} FLOPs/token vs {counted_dense:,.0f} counted outside attention "
        f"(x{ratio:.3f}; N = {r['matmul_params']:,} matmul params of {r['params']:,})",
    )
    q = r["d_model"] // r["heads"]
    expected = 12 * r["layers"] * r["heads"] * q * r["seq_len"]
    run.check(
        "attention_term_counted",
        flops["attention"] == expected > 0,
        f"attention term {flops['attention']:,} FLOPs/token (12 x L {r['layers']} x H "
        f"{r['heads']} x Q {q} x T {r['seq_len']} = {expected:,}), "
        f"{flops['attention'] / flops['total']:.0%} of the total; the counter saw "
        f"{r['counted_attention_flops_per_token']:,.0f} in attention ops",
    )
    run.check(
        "mfu_below_one",
        0 < r["mfu"] <= 1,
        f"{r['tokens_per_s']:,.0f} tokens/s x {flops['total']:,} FLOPs/token = "
        f"{r['achieved_flops'] / 1e9:,.1f} GFLOP/s of {r['peak_flops'] / 1e9:,.1f} GFLOP/s peak "
        f"({r['peak_source']}): MFU {r['mfu']:.1%} on {r['device']} ({r['dtype']})",
    )
