"""uneven worker (imports torch): DDP where rank 0 has `extra_batches` more batches than the
others, run with or without DDP's Join context manager."""

from __future__ import annotations

import hashlib
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join

from trainer_lab.config import TrainConfig
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext


def weights_digest(module: torch.nn.Module) -> str:
    flat = torch.cat([p.detach().reshape(-1).cpu() for p in module.parameters()])
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()[:16]


def run_part(
    ctx: WorkerContext, cfg: TrainConfig, label: str, use_join: bool, spec: dict[str, Any]
) -> None:
    events = ctx.events()
    trainer = Trainer(cfg, ctx.device, events, run_label=label)
    batches = int(spec["batches"]) + (int(spec["extra_batches"]) if ctx.rank == 0 else 0)
    events.write("plan", run=label, batches=batches)
    if use_join:
        # A rank that runs out of data "joins": it shadows the peers' gradient all-reduces
        # with zeros until every rank is done, then DDP broadcasts the last joiner's weights.
        with Join([trainer.model]):
            for _ in range(batches):
                trainer.train_step()
    else:
        for _ in range(batches):
            trainer.train_step()
    events.write("loop_done", run=label, steps=trainer.step)
    # What real training does next (an end-of-epoch sync); with uneven inputs and no Join the
    # ranks that finished wait here while rank 0 waits in its extra gradient all-reduce.
    dist.barrier()
    events.write("final", run=label, weights_digest=weights_digest(trainer.module))


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    """Runs spec["parts"] in order: "join" (with Join unless spec["join"] is false) and
    "nojoin". A part that hangs ends the launch, so "nojoin" goes last."""
    cfg = TrainConfig.from_dict(spec["config"])
    for part in spec["parts"]:
        run_part(ctx, cfg, part, part == "join" and bool(spec["join"]), spec)
