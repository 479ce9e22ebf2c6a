# WRONG (class: epoch-independent shuffle -- set_epoch never called). DistributedSampler + one
# DataLoader in loader_state, but the sampler's epoch stays 0: every epoch has the same order and
# the same per-rank share. A good checker must FAIL ("a new order each epoch").
# Modern style: dict.setdefault with a lambda-built loader.
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    if "loader" not in loader_state:
        loader_state["loader"] = DataLoader(
            dataset, batch_size=batch_size, sampler=DistributedSampler(dataset, shuffle=True)
        )
    yield from loader_state["loader"]
