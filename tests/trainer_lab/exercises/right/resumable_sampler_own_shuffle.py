"""Right, another style: no DistributedSampler and no DataLoader. The epoch's permutation comes
from a generator seeded with (seed, epoch), this rank takes every world_size-th id, and the
state counts batches handed out."""

from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.seed = seed
        self.epoch = 0
        self.batches = 0  # batches of this epoch handed out on this rank

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.batches = 0

    def _mine(self) -> list[int]:
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        order = torch.randperm(len(self.dataset), generator=g).tolist()  # type: ignore[arg-type]
        world = dist.get_world_size() if dist.is_initialized() else 1
        rank = dist.get_rank() if dist.is_initialized() else 0
        order += order[: (-len(order)) % world]  # pad so every rank gets as many
        return order[rank::world]

    def __iter__(self) -> Iterator[torch.Tensor]:
        mine = self._mine()
        while self.batches * self.batch_size < len(mine):
            start = self.batches * self.batch_size
            ids = mine[start : start + self.batch_size]
            self.batches += 1
            yield torch.stack([torch.as_tensor(self.dataset[i]) for i in ids])

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "batches": self.batches}

    def load_state_dict(self, state: dict) -> None:
        self.set_epoch(state["epoch"])
        self.batches = state["batches"]
