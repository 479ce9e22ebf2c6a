"""Resume a sharded loader mid-epoch. ResumableLoader yields this rank's batches (tensors of
sample ids) of the current epoch; set_epoch(epoch) starts an epoch. state_dict() is saved at a
checkpoint mid-epoch; after a restart a new ResumableLoader gets load_state_dict(state) (and no
set_epoch) and iterating it must continue with exactly the samples this rank has not yet been
given in that epoch. Run `drill exercise check resumable-sampler`."""

from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.loader = DataLoader(dataset, batch_size=batch_size, sampler=self.sampler)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.sampler.set_epoch(epoch)

    def __iter__(self) -> Iterator[torch.Tensor]:
        yield from self.loader  # TODO: a resumed loader starts the epoch over

    def state_dict(self) -> dict:
        return {"epoch": self.epoch}

    def load_state_dict(self, state: dict) -> None:
        self.set_epoch(state["epoch"])
