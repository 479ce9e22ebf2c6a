"""DistributedSampler gives each rank a disjoint slice; set_epoch reseeds the shuffle."""

from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(
    dataset: Dataset, epoch: int, batch_size: int, loader_state: dict
) -> Iterator[torch.Tensor]:
    if "loader" not in loader_state:
        sampler = DistributedSampler(dataset, shuffle=True, seed=0)
        loader_state["sampler"] = sampler
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    loader_state["sampler"].set_epoch(epoch)
    yield from loader_state["loader"]
