# WRONG (class: scaling by the wrong count / only on one rank). Sums the gradients on every
# rank but divides by the world size only on rank 0 ("rank 0 is the one that logs"): rank 1
# applies W x the gradient. Replicas diverge. A good checker must FAIL.
# Modern style: dataclass holding the process-group facts.
from dataclasses import dataclass

import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class PG:
    rank: int
    world: int


def sync_gradients(model: nn.Module) -> None:
    pg = PG(dist.get_rank(), dist.get_world_size())
    for p in model.parameters():
        if p.grad is None:
            continue
        dist.all_reduce(p.grad)
        if pg.rank == 0:
            p.grad /= pg.world
