# WRONG (class: unit mismatch -- saves samples, resumes in batches). state_dict() records the
# number of SAMPLES seen (batches x batch_size), but __iter__ treats the saved number as a count
# of BATCHES to skip, so a restored loader skips batch_size x too far (skip, not replay).
# A good checker must FAIL for any batch_size > 1.
# Modern style: itertools.islice + itertools.count.
import itertools
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.batch_size = batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.loader = DataLoader(dataset, batch_size=batch_size, sampler=self.sampler)
        self.epoch, self.skip, self.seen = 0, 0, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self.skip, self.seen = epoch, 0, 0

    def __iter__(self) -> Iterator[torch.Tensor]:
        self.sampler.set_epoch(self.epoch)
        self.seen = self.skip
        for batch in itertools.islice(self.loader, self.skip, None):
            self.seen += 1
            yield batch

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "samples": self.seen * self.batch_size}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.skip = state["epoch"], state["samples"]
