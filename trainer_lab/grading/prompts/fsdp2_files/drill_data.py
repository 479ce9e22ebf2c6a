"""The data and the model the FSDP2 round gives you. The grader puts its own copy next to your
train.py.

    from drill_data import DATASET_SIZE, GLOBAL_BATCH, Model, TrainSet

`TrainSet()` has DATASET_SIZE samples; item i is `(i, x, y)`: its index, a float32 feature
vector of FEATURES values and a float32 target of shape (1,) (regression: mean squared error).
GLOBAL_BATCH samples make one optimizer step at any world size W: GLOBAL_BATCH // W per rank
(GLOBAL_BATCH divides by 1, 2 and 3). Import them, never write their values.

`Model()` is the network to train: `model.blocks` (an nn.ModuleList of BLOCKS Blocks) between
an input and an output layer. Seed before you build it (every rank the same weights).

Samples are read one way only: `dataset[i]`, or `dataset.__getitems__(ids)` (what a DataLoader
calls for a batch). The grader observes every such read. The dataset holds no tensors: a sample's
values exist only as it is read, and under the grader they are drawn per run.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import Dataset

DATASET_SIZE = 60  # 5 global batches an epoch
GLOBAL_BATCH = 12
FEATURES = 8
HIDDEN = 24
BLOCKS = 3

SEED = 0  # the values outside the grader


def _sample(seed: int, index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, y) of sample `index` of the data drawn from `seed`."""
    w = torch.randn(FEATURES, 1, generator=torch.Generator().manual_seed(seed))
    g = torch.Generator().manual_seed((seed * 1_000_003 + 1 + index) % 2**63)
    x = torch.randn(FEATURES, generator=g)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(1, generator=g)
    return x, y


def _read(index: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _sample(SEED, index)


# The grader replaces this with its own reader of the same signature (it records each read).
_fetch = _read


class TrainSet(Dataset):
    def __len__(self) -> int:
        return DATASET_SIZE

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        i = int(index)
        if not 0 <= i < DATASET_SIZE:
            raise IndexError(f"sample {i} out of range (0..{DATASET_SIZE - 1})")
        x, y = _fetch(i)
        return i, x, y

    def __getitems__(self, indices: list[int]) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
        return [self[i] for i in indices]


class Block(nn.Module):
    """A residual MLP block."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(HIDDEN)
        self.linear = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.linear(self.norm(x)))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(FEATURES, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.out = nn.Linear(HIDDEN, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.out(h)
