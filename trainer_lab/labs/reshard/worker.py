"""reshard worker (imports torch). `save`: FSDP2 training at world size W, then a DCP sharded
checkpoint (model + AdamW state) and a digest of every full tensor. `load`: one launch of
max(sizes) processes; for each load world size w, ranks 0..w-1 form a w-rank group in which a
fresh FSDP2 model and optimizer load that checkpoint from disk (DCP re-partitions the shards
for the group), the full tensors are digested again, and the sampler is resumed at world size w
twice: from the global samples-consumed offset, and from each rank's own counter. (One launch
instead of one per size: a torchrun start costs ~5 s; the group is what DCP and FSDP see.)"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import build_loader
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.worker import WorkerContext


def build(
    cfg: TrainConfig, ctx: WorkerContext, group: Any = None
) -> tuple[nn.Module, torch.optim.Optimizer]:
    """FSDP2 over the whole job, or over `group` (a sub-group of ranks 0..w-1)."""
    torch.manual_seed(cfg.seed)
    model = build_model(cfg).to(ctx.device)
    if group is None:
        mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    else:
        mesh = DeviceMesh.from_group(group, ctx.device.type)
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    return model, optimizer


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    if isinstance(tree, list | tuple):
        out = {}
        for index, value in enumerate(tree):
            out.update(flatten(value, f"{prefix}{index}."))
        return out
    return {prefix.rstrip("."): tree}


def digests(state: dict[str, Any]) -> dict[str, str]:
    """sha256 of every full tensor (DTensors are all-gathered: a collective on every rank)."""
    out = {}
    for key, value in sorted(flatten(state).items()):
        if not torch.is_tensor(value):
            continue
        full = value.full_tensor() if isinstance(value, DTensor) else value
        data = full.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        out[key] = hashlib.sha256(data).hexdigest()[:16]
    return out


def save(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    events = ctx.events()
    model, optimizer = build(cfg, ctx)
    loader, sampler = build_loader(cfg, ctx.world_size, ctx.rank)
    sampler.set_epoch(0)
    batches = iter(loader)
    local = 0
    for step in range(1, int(spec["steps"]) + 1):
        ids, x, y = next(batches)
        loss = loss_fn(cfg, model(x.to(ctx.device)), y.to(ctx.device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sampler.advance(len(ids) * ctx.world_size)
        local += len(ids)
        events.write("consumed", step=step, sample_ids=ids.tolist(), loss=loss.item())
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.save(state, checkpoint_id=Path(spec["checkpoint"]))
    # The data position: global (same on every rank) and each rank's own counter.
    events.write("data_state", global_consumed=sampler.consumed, local_consumed=local)
    sums = digests(state)
    if ctx.rank == 0:
        files = sorted(p.name for p in Path(spec["checkpoint"]).iterdir())
        events.write("digests", digests=sums, files=files)


def remaining_ids(cfg: TrainConfig, world_size: int, rank: int, consumed: int) -> list[int]:
    loader, sampler = build_loader(cfg, world_size, rank)
    sampler.load_state_dict({"epoch": 0, "consumed": consumed})
    return [i for ids, _, _ in loader for i in ids.tolist()]


def load_at(ctx: WorkerContext, spec: dict[str, Any], w: int, group: Any) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    events = ctx.events()
    model, optimizer = build(cfg, ctx, group)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    if spec["load_state"]:
        dcp.load(state, checkpoint_id=Path(spec["checkpoint"]), process_group=group)
        set_state_dict(
            model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"]
        )
    model_sd, optim_sd = get_state_dict(model, optimizer)
    sums = digests({"model": model_sd, "optim": optim_sd})
    if ctx.rank == 0:
        events.write("digests", w=w, digests=sums)
    global_consumed = int(spec["global_consumed"])
    local_consumed = int(spec["local_consumed"])
    events.write(
        "resume",
        w=w,
        per_rank_batch=cfg.global_batch // w,
        # Re-partition from the global offset: every rank skips offset / W' of its new share.
        global_ids=remaining_ids(cfg, w, ctx.rank, global_consumed),
        # The bug: each rank skips as many samples as a rank had consumed before the change.
        per_rank_ids=remaining_ids(cfg, w, ctx.rank, local_consumed * w),
    )


def load(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    for w in spec["sizes"]:
        group = dist.new_group(list(range(w)))  # every rank takes part in creating it
        if ctx.rank < w:
            load_at(ctx, spec, w, group)
        dist.barrier()
