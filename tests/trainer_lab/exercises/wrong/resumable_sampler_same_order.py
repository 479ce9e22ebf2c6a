"""Wrong: resumes correctly, but set_epoch never reaches the sampler, so every epoch repeats
epoch 0's order (a loader compared with a fresh one of its own class cannot tell)."""

from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset, Subset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.epoch = 0
        self.consumed = 0  # samples of this epoch this rank has been given

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.consumed = 0

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
