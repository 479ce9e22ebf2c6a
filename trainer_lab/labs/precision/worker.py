"""precision worker (imports torch): fp32, bf16 autocast, fp16 autocast with and without a
GradScaler, on two setups that provoke fp16's limits.

- underflow: the loss is a small-magnitude term (weighted 1e-5), so the gradients flowing
  back through fp16 activations fall below fp16's smallest subnormal and become exactly zero.
- overflow: unnormalised inputs (x 3000): the backward pass through fp16 overflows to inf;
  without a scaler Adam writes inf/NaN into the weights, with one the step is skipped and the
  scale backs off.
The work runs on rank 0 (this lab is about numerics, not communication); other ranks wait.
"""

from __future__ import annotations

import statistics
import time
from contextlib import nullcontext
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from trainer_lab.train.worker import WorkerContext

SETUPS = {
    "underflow": {"loss_weight": 1e-5, "x_scale": 1.0},
    "overflow": {"loss_weight": 1.0, "x_scale": 3000.0},
}
BENIGN = {"loss_weight": 1.0, "x_scale": 1.0}
MODES = ("fp32", "bf16", "fp16", "fp16_scaler")


def finfo(dtype: torch.dtype) -> dict[str, float]:
    info = torch.finfo(dtype)
    return {
        "max": float(info.max),
        "eps": float(info.eps),
        "smallest_normal": float(info.smallest_normal),
        "smallest_subnormal": float(
            torch.nextafter(torch.zeros((), dtype=dtype), torch.ones((), dtype=dtype))
        ),
        "bits": info.bits,
    }


def build(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 4)
    )


def train(mode: str, setup: dict[str, float], spec: dict[str, Any]) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(1)
    x_all = torch.randn(512, 32, generator=gen) * setup["x_scale"]
    y_all = torch.tanh(torch.randn(512, 32, generator=gen)[:, :4])
    model = build(spec["seed"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sabotage = spec["sabotage"]
    dtype = {
        "fp32": None,
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
        "fp16_scaler": torch.float16,
    }[mode]
    if mode == "bf16" and sabotage == "bf16_is_fp16":
        dtype = torch.float16
    scaler = None
    if mode == "fp16_scaler":
        # growth_interval 4 (default 2000): the scale climbs fast enough to see it adapt
        scaler = torch.amp.GradScaler("cpu", growth_interval=4, enabled=sabotage != "no_scaler")
    nonfinite, zero_fractions, losses, backoffs, skipped = 0, [], [], 0, 0
    compute_dtype = "float32"
    start = time.perf_counter()
    for step in range(spec["steps"]):
        i = (step * 64) % len(x_all)
        x, y = x_all[i : i + 64], y_all[i : i + 64]
        context = torch.autocast("cpu", dtype=dtype) if dtype is not None else nullcontext()
        with context:
            out = model(x)
            loss = nn.functional.mse_loss(out.float(), y) * setup["loss_weight"]
        compute_dtype = str(out.dtype).removeprefix("torch.")
        if not torch.isfinite(loss):
            nonfinite += 1
        optimizer.zero_grad(set_to_none=True)
        if scaler is not None and scaler.is_enabled():
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grads = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            before = scaler.get_scale()
            scaler.step(optimizer)  # skipped when the unscaled grads hold inf/NaN
            scaler.update()
            if scaler.get_scale() < before:
                backoffs += 1
                skipped += 1
        else:
            loss.backward()
            grads = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            optimizer.step()
        zero_fractions.append((grads == 0).float().mean().item())
        losses.append(loss.item())
    return {
        "compute_dtype": compute_dtype,
        "nonfinite_loss_steps": nonfinite,
        "zero_grad_fraction": round(statistics.median(zero_fractions), 4),
        "first_loss": losses[0],
        "final_loss": losses[-1],
        "backoffs": backoffs,
        "skipped_steps": skipped,
        "final_scale": scaler.get_scale() if scaler is not None and scaler.is_enabled() else None,
        "seconds": round(time.perf_counter() - start, 3),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        events = ctx.events()
        for name, dtype in (
            ("float32", torch.float32),
            ("bfloat16", torch.bfloat16),
            ("float16", torch.float16),
        ):
            events.write("finfo", dtype=name, **finfo(dtype))
        for setup_name, setup in SETUPS.items():
            if spec["sabotage"] == "benign":
                setup = BENIGN
            for mode in MODES:
                events.write("precision", setup=setup_name, mode=mode, **train(mode, setup, spec))
        ctx.log("precision done")
    if dist.is_initialized():
        dist.barrier()
