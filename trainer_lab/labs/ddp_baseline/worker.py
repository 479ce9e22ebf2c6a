"""ddp-baseline worker (imports torch): DDP on W ranks, then a single-process reference on
rank 0 fed the concatenated global batches, compared step by step and weight by weight."""

from __future__ import annotations

import hashlib
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.config import TrainConfig
from trainer_lab.train.spec import TrainSpec
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext


def weights_digest(module: torch.nn.Module) -> str:
    flat = torch.cat([p.detach().reshape(-1).cpu() for p in module.parameters()])
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()[:16]


def stale_gradients() -> Any:
    """An on_grads hook (the trainer runs without gradient sync): average this step's local
    gradients over the ranks, keep them, and hand the optimizer the previous step's average
    (zeros at the first step)."""
    previous: list[torch.Tensor] = []

    def swap(trainer: Trainer) -> None:
        params = [p for p in trainer.module.parameters() if p.grad is not None]
        world = dist.get_world_size()
        current = [p.grad.detach().clone() for p in params]
        for grad in current:
            dist.all_reduce(grad)
            grad.div_(world)
        stale = previous or [torch.zeros_like(g) for g in current]
        for p, grad in zip(params, stale, strict=True):
            p.grad.copy_(grad)
        previous[:] = current

    return swap


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    events = ctx.events()
    train_spec = TrainSpec(on_grads=stale_gradients()) if spec.get("stale") else TrainSpec()
    trainer = Trainer(cfg, ctx.device, events, run_label="distributed", spec=train_spec)
    trainer.train()
    events.write("final", run="distributed", weights_digest=weights_digest(trainer.module))
    ctx.log(f"distributed run done: {cfg.steps} steps")
    if ctx.rank == 0:
        # Same seed, so the same initial weights; one replica, so each batch is the whole
        # global batch the W ranks shared (the sampler's permutation does not depend on W).
        reference = Trainer(cfg, ctx.device, events, run_label="single", rank=0, world_size=1)
        reference.train()
        diff = max(
            (a.detach() - b.detach()).abs().max().item()
            for a, b in zip(trainer.module.parameters(), reference.module.parameters(), strict=True)
        )
        events.write("compare", max_weight_diff=diff)
    dist.barrier()
