# RIGHT. Hand-written partition: a permutation from torch.Generator seeded with (base seed, epoch),
# padded by repeating its head to W*ceil(N/W), then a CONTIGUOUS slice per rank (not strided like
# DistributedSampler; the brief asks for a split, not that exact layout). Every id appears, the
# extras repeat ids of the epoch, each rank gets ceil(N/W). Batches by a generator.
# Modern style: torch.tensor_split + Tensor.split for batching; loader_state unused except a seed.
import math
from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, default_collate


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    seed = loader_state.setdefault("seed", 1234)
    rank, world = dist.get_rank(), dist.get_world_size()
    n = len(dataset)
    per = math.ceil(n / world)
    g = torch.Generator().manual_seed(seed * 100003 + epoch)
    order = torch.randperm(n, generator=g)
    reps = math.ceil(per * world / n)
    order = order.repeat(reps)[: per * world]
    mine = order[rank * per : (rank + 1) * per]
    for ids in mine.split(batch_size):
        yield default_collate([dataset[i] for i in ids.tolist()])
