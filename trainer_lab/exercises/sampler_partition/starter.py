"""Partition a dataset across ranks. epoch_batches is called once per epoch on every rank; it
must yield this rank's batches so that, in each epoch, the ranks together see every sample exactly
once, in a fresh order each epoch. loader_state is a dict kept between calls (build the loader
once). Run `drill exercise check sampler-partition`."""

from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset


def epoch_batches(
    dataset: Dataset, epoch: int, batch_size: int, loader_state: dict
) -> Iterator[torch.Tensor]:
    if "loader" not in loader_state:
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    yield from loader_state["loader"]
