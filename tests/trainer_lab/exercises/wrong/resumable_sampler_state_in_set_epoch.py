"""Wrong: the epoch and the position are first set in set_epoch, not in __init__: a training loop
that always calls set_epoch works, but a loader never given it (epoch 0) cannot run or save."""

from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset, Subset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.consumed = 0
        self.sampler.set_epoch(epoch)

    def __iter__(self) -> Iterator[torch.Tensor]:
        remaining = list(self.sampler)[self.consumed :]  # this rank's indices, not yet seen
        loader = DataLoader(Subset(self.dataset, remaining), batch_size=self.batch_size)
        for batch in loader:
            self.consumed += len(batch)
            yield batch

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, state: dict) -> None:
        self.set_epoch(state["epoch"])
        self.consumed = state["consumed"]
