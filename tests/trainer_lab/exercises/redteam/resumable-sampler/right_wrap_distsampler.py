# RIGHT. Keeps torch's DistributedSampler for the epoch's shard order (seed + epoch shuffle,
# DistributedSampler padding) and adds a cursor: the number of batches already HANDED OUT in the
# current epoch. The cursor is advanced BEFORE the yield, so state_dict() taken after the consumer
# received K batches says K (no replay, no skip). set_epoch resets the cursor; load_state_dict
# restores (epoch, cursor) and a fresh loader starts at (0, 0).
# Modern style: class with @property-free dict state, itertools.islice over a chunked index list,
# torch.utils.data.default_collate so batches look exactly like a DataLoader's.
import itertools
from collections.abc import Iterator

import torch
from torch.utils.data import Dataset, default_collate
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.epoch = 0
        self.cursor = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.cursor = 0

    def _batches(self) -> list[list[int]]:
        self.sampler.set_epoch(self.epoch)
        idx = list(self.sampler)
        return [idx[i : i + self.batch_size] for i in range(0, len(idx), self.batch_size)]

    def __iter__(self) -> Iterator[torch.Tensor]:
        for chunk in itertools.islice(self._batches(), self.cursor, None):
            self.cursor += 1
            yield default_collate([self.dataset[i] for i in chunk])

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "cursor": self.cursor}

    def load_state_dict(self, state: dict) -> None:
        self.epoch = int(state["epoch"])
        self.cursor = int(state["cursor"])
