# WRONG (class: off-by-one -- cursor advanced AFTER the yield). A generator is suspended AT the
# yield while the consumer trains on the batch, so state_dict() taken after K batches were
# received still says K-1: the restored loader replays the last batch. A good checker must FAIL
# (one batch replayed).
# Modern style: enumerate with start=, DistributedSampler underneath.
from collections.abc import Iterator

import torch
from torch.utils.data import Dataset, default_collate
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset, self.batch_size = dataset, batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.epoch, self.cursor = 0, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self.cursor = epoch, 0

    def __iter__(self) -> Iterator[torch.Tensor]:
        self.sampler.set_epoch(self.epoch)
        idx = list(self.sampler)
        batches = [idx[i : i + self.batch_size] for i in range(0, len(idx), self.batch_size)]
        for k, b in enumerate(batches[self.cursor :], start=self.cursor):
            yield default_collate([self.dataset[i] for i in b])
            self.cursor = k + 1

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "cursor": self.cursor}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.cursor = state["epoch"], state["cursor"]
