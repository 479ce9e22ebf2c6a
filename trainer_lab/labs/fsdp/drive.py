"""fsdp lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

TASK = "trainer_lab.labs.fsdp.worker:main"
MODES = ("ddp", "fsdp", "fsdp_mp")
RULE_OF_THUMB = 16  # B/param: bf16 weights + bf16 grads + fp32 master + Adam m and v


def world_sizes(world: int) -> list[int]:
    return sorted({w for w in (1, 2, 4, world) if w <= world})


def drive(run: LabContext) -> None:
    p = run.params
    sizes = world_sizes(run.world_size)
    batch = 4 * math.lcm(*sizes)
    cfg = TrainConfig(hidden=p["hidden"], depth=p["depth"], global_batch=batch, steps=p["steps"])
    run.plan(1)
    run.launch(
        TASK,
        {
            "config": cfg.to_dict(),
            "sizes": sizes,
            "steps": p["steps"],
            "sum_grads": p["grad_divide"] == "sum",
            "replicate": p["shard"] == "replicate",
            "master_copy": p["master_copy"],
            "wrap": p["wrap"],
            "collective_timeout_s": 60,
        },
    )
    events = run.events()
    n_params = next((e["n_params"] for e in events.get(0, []) if e["event"] == "model"), None)
    if not n_params:
        raise LabError("rank 0 did not report the model size")
    memory: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    losses: dict[tuple[int, str, int], list[float]] = defaultdict(list)
    norms: dict[tuple[int, str, int], float] = {}
    for rank_events in events.values():
        for e in rank_events:
            if e["event"] == "memory":
                memory[(e["w"], e["mode"])].append(e)
            elif e["event"] == "loss":
                losses[(e["w"], e["mode"], e["step"])].append(e["loss"])
                if e["rank"] == 0:
                    norms[(e["w"], e["mode"], e["step"])] = e["grad_norm"]
    run.observe("n_params", n_params)
    run.observe("world_sizes", sizes)
    run.observe("bytes_per_param.rule_of_thumb", RULE_OF_THUMB)
    shard_ok, shard_detail = True, []
    loss_ok, loss_detail = True, []
    grad_ok, grad_detail = True, []
    mp_detail = ""
    mp_ok = False
    for w in sizes:
        for mode in MODES:
            rows = memory[(w, mode)]
            if len(rows) != w:
                raise LabError(f"w={w} {mode}: {len(rows)} of {w} ranks reported memory")
            for key in ("params", "grads", "optimizer", "total"):
                run.observe(f"bytes.w{w}.{mode}.{key}", max(r[key] for r in rows))
        ddp = max(r["total"] for r in memory[(w, "ddp")])
        fsdp = max(r["total"] for r in memory[(w, "fsdp")])
        ratio = fsdp / ddp
        run.observe(f"fsdp_over_ddp.w{w}", round(ratio, 4))
        full = max(r["params"] for r in memory[(w, "ddp")])
        gathered = max(r.get("peak_gathered", 0) for r in memory[(w, "fsdp")])
        run.observe(f"peak_gathered_over_full.w{w}", round(gathered / full, 4))
        shard_ok &= ratio <= 1.15 / w
        shard_detail.append(f"w={w}: {fsdp} vs {ddp} B ({ratio:.3f}, 1/w={1 / w:.3f})")
        diffs, mp_diffs, grad_diffs = [], [], []
        for step in range(1, p["steps"] + 1):
            ref = sum(losses[(w, "ddp", step)]) / w
            got = sum(losses[(w, "fsdp", step)]) / w
            mp = sum(losses[(w, "fsdp_mp", step)]) / w
            diffs.append(abs(got - ref) / max(abs(ref), 1e-12))
            g_ref, g_got = norms[(w, "ddp", step)], norms[(w, "fsdp", step)]
            grad_diffs.append(abs(g_got - g_ref) / max(g_ref, 1e-12))
            mp_diffs.append(abs(mp - ref) / max(abs(ref), 1e-12))
        run.observe(f"max_rel_loss_diff.w{w}", max(diffs))
        run.observe(f"mp_max_rel_loss_diff.w{w}", max(mp_diffs))
        run.observe(f"max_rel_grad_norm_diff.w{w}", max(grad_diffs))
        run.observe(f"grad_norm_ratio.w{w}", norms[(w, "fsdp", 1)] / norms[(w, "ddp", 1)])
        loss_ok &= max(diffs) <= p["tolerance"]
        grad_ok &= max(grad_diffs) <= p["tolerance"]
        loss_detail.append(f"w={w}: {max(diffs):.2e}")
        grad_detail.append(f"w={w}: {max(grad_diffs):.2e}")
        if w == sizes[-1]:
            ddp_pp = max(r["total"] for r in memory[(w, "ddp")]) / n_params
            mp_all = sum(r["total"] for r in memory[(w, "fsdp_mp")]) / n_params
            run.observe("bytes_per_param.ddp", round(ddp_pp, 3))
            run.observe("bytes_per_param.fsdp_mp_all_ranks", round(mp_all, 3))
            mp_ok = 15 <= mp_all <= 17.5
            mp_detail = (
                f"bf16 FSDP at w={w}: {mp_all:.2f} B/param summed over ranks "
                f"({mp_all / w:.2f} per rank); DDP fp32: {ddp_pp:.2f} per rank; rule of thumb "
                f"{RULE_OF_THUMB}"
            )
    run.check("fsdp_holds_1_over_w", shard_ok, "; ".join(shard_detail))
    run.check(
        "losses_match",
        loss_ok,
        f"max relative loss difference FSDP vs DDP {', '.join(loss_detail)} "
        f"(tolerance {p['tolerance']:g})",
    )
    run.check(
        "grads_match",
        grad_ok,
        f"max relative difference of the full gradient norm FSDP vs DDP {', '.join(grad_detail)}"
        f" (tolerance {p['tolerance']:g})",
    )
    run.check("mp_bytes_per_param", mp_ok, mp_detail)
