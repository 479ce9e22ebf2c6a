"""Right, another style: no DistributedSampler. One permutation per epoch from a generator seeded
with the epoch (the same on every rank), padded by wrapping around to a multiple of the world
size, then every world_size-th id from this rank's offset."""

from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset


def epoch_batches(
    dataset: Dataset, epoch: int, batch_size: int, loader_state: dict
) -> Iterator[torch.Tensor]:
    world, rank = dist.get_world_size(), dist.get_rank()
    g = torch.Generator().manual_seed(1_000 + epoch)
    order = torch.randperm(len(dataset), generator=g).tolist()  # type: ignore[arg-type]
    order += order[: (-len(order)) % world]
    mine = order[rank::world]
    for start in range(0, len(mine), batch_size):
        yield torch.stack([torch.as_tensor(dataset[i]) for i in mine[start : start + batch_size]])
