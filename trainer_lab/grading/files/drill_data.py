"""The dataset the coding round gives you. The grader puts its own copy next to your train.py.

    from drill_data import BATCH_SIZE, DATASET_SIZE, FEATURES, ToyDataset

A map-style dataset of DATASET_SIZE samples. Item i is `(i, x, y)`: the sample id (an int), a
float32 feature vector of FEATURES values and a float32 target of shape (1,), a noisy smooth
function of x (regression: mean squared error works). Use BATCH_SIZE samples per rank per step:
import it, never write its value (the grader sets it per run).

Samples are read one way only: `dataset[i]`, or `dataset.__getitems__(ids)` (what a DataLoader
calls for a batch). The grader observes every such read. The dataset holds no tensors: a sample's
values exist only as it is read. Under the grader, the values are drawn per run (every run of
your script may see other values for the same id): train on what you read, each time you read it.
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

DATASET_SIZE = 48
FEATURES = 8
BATCH_SIZE = 4

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


class ToyDataset(Dataset):
    def __init__(self, size: int = DATASET_SIZE) -> None:
        self._size = size

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"ToyDataset has no attribute {name!r}: it holds no tensors; read samples as "
            "dataset[i] or dataset.__getitems__(ids) (the reads the grader observes)"
        )

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        i = int(index)
        if not 0 <= i < self._size:
            raise IndexError(f"sample {i} out of range (0..{self._size - 1})")
        x, y = _fetch(i)
        return i, x, y

    def __getitems__(self, indices: list[int]) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
        return [self[i] for i in indices]
