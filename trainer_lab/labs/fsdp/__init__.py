"""fsdp: FSDP2 fully_shard against DDP on the same model and data. Per-rank bytes of
parameters, gradients and optimizer state are measured from the tensors each rank holds."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

TASK = "trainer_lab.labs.fsdp.worker:main"
MODES = ("ddp", "fsdp", "fsdp_mp")
RULE_OF_THUMB = 16  # B/param: bf16 weights + bf16 grads + fp32 master + Adam m and v

SPEC = LabSpec(
    name="fsdp",
    group="performance",
    summary=(
        "FSDP2 fully_shard vs DDP at world sizes 1, 2 and 4 (those up to the lab's W): the "
        "bytes of parameters, gradients and Adam state each rank holds, measured from its "
        "tensors. FSDP holds about 1/W of DDP. Bytes per parameter with bf16 compute are "
        "reported next to the 16 B/param rule of thumb; FSDP's losses match DDP's."
    ),
    params=(
        ParamSpec(
            "steps", "int", 4, "optimizer steps per mode and world size", minimum=1, maximum=50
        ),
        ParamSpec("hidden", "int", 128, "MLP width", minimum=8, maximum=2048),
        ParamSpec(
            "depth", "int", 8, "hidden layers (each its own FSDP group)", minimum=1, maximum=32
        ),
        ParamSpec("tolerance", "float", 1e-5, "allowed relative loss difference", minimum=0.0),
        ParamSpec(
            "grad_divide",
            "choice",
            "mean",
            "FSDP gradient reduction. mean: average over ranks (correct); debug sum: gradient "
            "divide factor 1 (the shape of the gloo averaging bug), so the gradient check must "
            "fail (Adam is scale-invariant: the losses barely move)",
            choices=("mean", "sum"),
        ),
        ParamSpec(
            "shard",
            "choice",
            "ranks",
            "FSDP mesh. ranks: every parameter sharded over the w ranks; debug replicate: a 2-D "
            "HSDP mesh of w replicas x 1 shard, so every rank keeps a full replica and "
            "fsdp_holds_1_over_w (and the summed mp_bytes_per_param) must fail",
            choices=("ranks", "replicate"),
        ),
        ParamSpec(
            "wrap",
            "choice",
            "layers",
            "FSDP groups. layers: fully_shard every layer, then the root (gathered one layer at "
            "a time); root: the root only, one group: still 1/W at rest, but the whole model is "
            "gathered at once and stays gathered until backward (peak_gathered_over_full ~1, "
            "no overlap of one group's gather with another's compute)",
            choices=("layers", "root"),
        ),
        ParamSpec(
            "master_copy",
            "bool",
            False,
            "debug: the bf16 FSDP run also keeps its own fp32 master copy of the weights for "
            "the optimizer (hand-rolled mixed precision on top of FSDP's fp32 shards): 4 B/param "
            "more, so mp_bytes_per_param must fail",
        ),
    ),
    observations=(
        ObservationSpec("n_params", "model parameters"),
        ObservationSpec("world_sizes", "world sizes measured"),
        ObservationSpec("bytes.w*.*.total", "largest per-rank bytes (params+grads+Adam)", "B"),
        ObservationSpec("bytes.w*.*.params", "largest per-rank parameter bytes", "B"),
        ObservationSpec("bytes.w*.*.grads", "largest per-rank gradient bytes", "B"),
        ObservationSpec("bytes.w*.*.optimizer", "largest per-rank optimizer bytes", "B"),
        ObservationSpec("fsdp_over_ddp.w*", "largest FSDP rank / DDP rank, total bytes"),
        ObservationSpec(
            "peak_gathered_over_full.w*",
            "fp32 FSDP: most all-gathered parameter bytes alive at once in forward / the full "
            "model's parameter bytes (DDP)",
        ),
        ObservationSpec("bytes_per_param.ddp", "per rank, fp32 Adam, DDP", "B"),
        ObservationSpec(
            "bytes_per_param.fsdp_mp_all_ranks", "bf16 compute, summed over ranks", "B"
        ),
        ObservationSpec("bytes_per_param.rule_of_thumb", "mixed-precision Adam rule of thumb", "B"),
        ObservationSpec("max_rel_loss_diff.w*", "FSDP vs DDP global loss, max over steps"),
        ObservationSpec("mp_max_rel_loss_diff.w*", "bf16 FSDP vs fp32 DDP (for scale)"),
        ObservationSpec("max_rel_grad_norm_diff.w*", "FSDP vs DDP full-gradient norm"),
        ObservationSpec("grad_norm_ratio.w*", "FSDP / DDP gradient norm at step 1 (1 = mean)"),
    ),
    checks=(
        CheckSpec("fsdp_holds_1_over_w", "each FSDP rank holds <= 1.15/w of DDP's bytes"),
        CheckSpec("losses_match", "FSDP fp32 losses equal DDP's within tolerance"),
        CheckSpec("grads_match", "FSDP's averaged gradient equals DDP's (norm, every step)"),
        CheckSpec("mp_bytes_per_param", "bf16 FSDP: 15-17.5 B/param summed over ranks"),
    ),
    default_world_size=2,
    min_world_size=1,
    max_world_size=8,
    timeout_s=120.0,
)


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
