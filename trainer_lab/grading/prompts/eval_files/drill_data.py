"""The data the distributed-evaluation round gives you. The grader puts its own copy next to your
train.py.

    from drill_data import BATCH_SIZE, CLASSES, EVAL_SIZE, FEATURES, EvalSet, TrainSet

Classification into CLASSES classes. `TrainSet()` has DATASET_SIZE samples, `EvalSet()` has
EVAL_SIZE (25: not divisible by 2 or 3). Item i of either is `(i, x, label)`: its index, a
float32 feature vector of FEATURES values and an int64 label (a scalar). Use BATCH_SIZE training
samples per rank per step: import it, never write its value.

Samples are read one way only: `dataset[i]`, or `dataset.__getitems__(ids)` (what a DataLoader
calls for a batch). The grader observes every such read. The datasets hold no tensors: a sample's
values exist only as it is read, and under the grader they are drawn per run.
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

DATASET_SIZE = 48
EVAL_SIZE = 25
EVAL_BASE = 10_000  # the eval samples' ids among the reads the grader observes
FEATURES = 8
CLASSES = 3
BATCH_SIZE = 4

SEED = 0  # the values outside the grader


def _sample(seed: int, index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, label) of sample `index` of the data drawn from `seed`."""
    w = torch.randn(FEATURES, CLASSES, generator=torch.Generator().manual_seed(seed))
    g = torch.Generator().manual_seed((seed * 1_000_003 + 1 + index) % 2**63)
    x = torch.randn(FEATURES, generator=g)
    label = torch.argmax(x @ w + 0.3 * torch.randn(CLASSES, generator=g))
    return x, label


def _read(index: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _sample(SEED, index)


# The grader replaces this with its own reader of the same signature (it records each read).
_fetch = _read


class _Samples(Dataset):
    base = 0
    size = DATASET_SIZE

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        i = int(index)
        if not 0 <= i < self.size:
            raise IndexError(f"sample {i} out of range (0..{self.size - 1})")
        x, label = _fetch(self.base + i)
        return i, x, label

    def __getitems__(self, indices: list[int]) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
        return [self[i] for i in indices]


class TrainSet(_Samples):
    pass


class EvalSet(_Samples):
    base = EVAL_BASE
    size = EVAL_SIZE
