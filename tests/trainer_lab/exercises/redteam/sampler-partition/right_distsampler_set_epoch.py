# RIGHT. Builds one DistributedSampler (shuffle=True, drop_last=False: pads by repeating ids to
# ceil(N/W) per rank) and one DataLoader over it, kept in loader_state; every call sets the epoch
# on the sampler BEFORE iterating, so each epoch is a new shuffle of the whole dataset and the
# ranks' shares change.
# Modern style: dict.setdefault-free walrus on loader_state.
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    if (loader := loader_state.get("loader")) is None:
        sampler = DistributedSampler(dataset, shuffle=True, drop_last=False)
        loader = loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    loader.sampler.set_epoch(epoch)
    yield from loader
