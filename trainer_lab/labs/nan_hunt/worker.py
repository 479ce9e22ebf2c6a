"""nan-hunt worker (imports torch).

1. DDP training where one sample (on the last rank, at step K) carries an inf feature. Every
   step the ranks agree (all-reduce MIN of a finite flag) whether loss and gradient norm are
   finite; the non-finite guard then skips the optimizer step on every rank and each rank
   reports the sample ids whose per-sample loss is non-finite.
2. Rank 0 replays the offending sample with forward hooks (first module whose output is
   non-finite) and `torch.autograd.set_detect_anomaly(True)` (the backward op that returned NaN).
3. Rank 0, single process: AdamW at a high LR without and with warmup (grad-norm spike), and
   SGD at a high LR without and with gradient clipping (update norm); AdamW with clipping too,
   to show that clipping does not bound Adam's step the way it bounds SGD's.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import SyntheticDataset
from trainer_lab.train.model import build_model
from trainer_lab.train.trainer import seed_everything
from trainer_lab.train.worker import WorkerContext

ANOMALY = re.compile(r"Function '(\w+)' returned nan values")


def batch_ids(step: int, rank: int, world: int, per_rank: int, n: int) -> list[int]:
    start = ((step - 1) * world + rank) * per_rank
    return [(start + i) % n for i in range(per_rank)]


def hunt(ctx: WorkerContext, spec: dict[str, Any]) -> tuple[nn.Module, list[int]]:
    cfg = TrainConfig.from_dict(spec["config"])
    data = SyntheticDataset(cfg)
    if spec["corrupt_id"] >= 0:
        data.x[spec["corrupt_id"], 0] = float(spec["corrupt_value"])
    seed_everything(cfg.seed)
    module = build_model(cfg).to(ctx.device)
    model = DDP(module)
    optimizer = torch.optim.AdamW(module.parameters(), lr=cfg.lr)
    per_rank = cfg.global_batch // ctx.world_size
    events = ctx.events()
    offenders: list[int] = []
    for step in range(1, cfg.steps + 1):
        ids = batch_ids(step, ctx.rank, ctx.world_size, per_rank, len(data))
        x, y = data.x[ids].to(ctx.device), data.y[ids].to(ctx.device)
        per_sample = nn.functional.mse_loss(model(x), y, reduction="none").mean(dim=1)
        loss = per_sample.mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(module.parameters(), float("inf")).item()
        finite = torch.tensor([float(math.isfinite(loss.item()) and math.isfinite(grad_norm))])
        dist.all_reduce(finite, op=dist.ReduceOp.MIN)  # every rank must take the same decision
        global_loss = loss.detach().clone()
        dist.all_reduce(global_loss)
        bad = [i for i, v in zip(ids, per_sample.tolist(), strict=True) if not math.isfinite(v)]
        skipped = spec["guard"] and finite.item() == 0.0
        if skipped:
            optimizer.zero_grad(set_to_none=True)
            events.write("nonfinite", step=step, sample_ids=bad, grad_norm=grad_norm)
        else:
            optimizer.step()
        offenders += bad
        events.write(
            "step",
            run="hunt",
            step=step,
            loss=loss.item(),
            global_loss=global_loss.item() / ctx.world_size,
            grad_norm=grad_norm,
            skipped=skipped,
            sample_ids=ids,
            phases={},
        )
    gathered: list[list[int]] = [[] for _ in range(ctx.world_size)]
    dist.all_gather_object(gathered, offenders)
    return module, sorted({i for part in gathered for i in part})


def replay(module: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, Any]:
    """Forward hooks name the first non-finite module output; anomaly mode names the op."""
    first: list[str] = []
    handles = []
    for name, sub in module.named_modules():
        if name:

            def hook(_m: nn.Module, _i: Any, out: torch.Tensor, name: str = name) -> None:
                if not first and isinstance(out, torch.Tensor) and not out.isfinite().all():
                    first.append(f"{name} ({type(_m).__name__})")

            handles.append(sub.register_forward_hook(hook))
    op, message = None, ""
    with warnings.catch_warnings(record=True), torch.autograd.set_detect_anomaly(True):
        try:
            nn.functional.mse_loss(module(x), y).backward()
        except RuntimeError as error:
            message = str(error).splitlines()[0]
            found = ANOMALY.search(message)
            op = found.group(1) if found else None
    for handle in handles:
        handle.remove()
    module.zero_grad(set_to_none=True)
    return {"first_nonfinite_module": first[0] if first else None, "op": op, "message": message}


def lr_run(
    kind: str, lr: float, warmup: int, clip: float | None, steps: int, seed: int
) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(seed + 1)
    x_all = torch.randn(1024, 16, generator=gen)
    y_all = torch.tanh(x_all @ (torch.randn(16, 4, generator=gen) / 4) * 2)
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 4)
    )
    params = list(model.parameters())
    if kind == "sgd":
        optimizer: torch.optim.Optimizer = torch.optim.SGD(params, lr=lr)
    else:
        optimizer = torch.optim.AdamW(params, lr=lr)
    norms, updates, losses = [], [], []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / warmup) if warmup else lr
        i = (step * 32) % len(x_all)
        loss = nn.functional.mse_loss(model(x_all[i : i + 32]), y_all[i : i + 32])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(params, clip if clip else float("inf")).item()
        before = torch.cat([p.detach().reshape(-1) for p in params])
        optimizer.step()
        after = torch.cat([p.detach().reshape(-1) for p in params])
        norms.append(norm)
        updates.append((after - before).norm().item())
        losses.append(loss.item())
    return {
        "lr": lr,
        "warmup_steps": warmup,
        "clip": clip,
        "grad_norms": [json_number(round(n, 4)) for n in norms],
        "first_grad_norm": json_number(norms[0]),
        "max_grad_norm": json_number(max(norms, key=lambda n: n if math.isfinite(n) else math.inf)),
        "max_update_norm": json_number(max(u if math.isfinite(u) else math.inf for u in updates)),
        "final_loss": json_number(losses[-1]),
    }


def json_number(value: float) -> float | str:
    """Non-finite floats as the strings "inf"/"nan" (result.json stays standard JSON)."""
    return value if math.isfinite(value) else str(value)


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    module, offenders = hunt(ctx, spec)
    if ctx.rank == 0:
        events = ctx.events()
        cfg = TrainConfig.from_dict(spec["config"])
        if offenders:
            data = SyntheticDataset(cfg)
            data.x[spec["corrupt_id"], 0] = float(spec["corrupt_value"])
            found = replay(module, data.x[offenders[:1]], data.y[offenders[:1]])
            events.write("replay", sample_id=offenders[0], **found)
        sab, steps, seed = spec["sabotage"], spec["lr_steps"], cfg.seed
        runs = {
            "adam_no_warmup": ("adam", 0.2, 20 if sab == "warmup" else 0, None),
            "adam_warmup": ("adam", 0.2, 20, None),
            "adam_clip": ("adam", 0.2, 0, 1.0),
            "sgd_no_clip": ("sgd", 4.0, 0, None),
            "sgd_clip": ("sgd", 4.0, 0, None if sab == "no_clip" else 1.0),
        }
        for name, (kind, lr, warmup, clip) in runs.items():
            events.write(
                "lr_run", name=name, kind=kind, **lr_run(kind, lr, warmup, clip, steps, seed)
            )
        ctx.log("nan-hunt done")
    dist.barrier()
