# WRONG (class: ranks shuffle independently). Each rank shuffles the WHOLE dataset with a seed that
# includes its rank (seed = epoch * 1000 + rank) and takes its strided share: the ranks' permutations
# differ, so their shares overlap and some ids are never seen in the epoch. A good checker must
# FAIL (ranks do not partition the data).
# Modern style: torch.Generator + Tensor.split.
import math
from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, default_collate


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    rank, world = dist.get_rank(), dist.get_world_size()
    n = len(dataset)
    g = torch.Generator().manual_seed(epoch * 1000 + rank)
    order = torch.randperm(n, generator=g)
    total = math.ceil(n / world) * world
    order = torch.cat([order, order[: total - n]])
    for ids in order[rank::world].split(batch_size):
        yield default_collate([dataset[i] for i in ids.tolist()])
