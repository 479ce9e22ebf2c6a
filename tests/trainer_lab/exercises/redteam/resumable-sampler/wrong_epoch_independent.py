# WRONG (class: epoch-independent shuffle). Resume logic is right (cursor bumped before yield,
# reset by set_epoch), but the permutation's generator is seeded with `seed` only, so every epoch
# has the SAME order and the same per-rank share. A good checker must FAIL ("each epoch is a new
# shuffle").
# Modern style: torch.Generator + list slicing.
from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, default_collate


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset, self.batch_size, self.seed = dataset, batch_size, seed
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.epoch, self.cursor = 0, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self.cursor = epoch, 0

    def __iter__(self) -> Iterator[torch.Tensor]:
        n = len(self.dataset)
        g = torch.Generator().manual_seed(self.seed)
        order = torch.randperm(n, generator=g).tolist()
        per = -(-n // self.world)
        order += order[: per * self.world - n]
        shard = order[self.rank :: self.world]
        batches = [shard[i : i + self.batch_size] for i in range(0, len(shard), self.batch_size)]
        while self.cursor < len(batches):
            b = batches[self.cursor]
            self.cursor += 1
            yield default_collate([self.dataset[i] for i in b])

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "cursor": self.cursor}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.cursor = state["epoch"], state["cursor"]
