"""The data the preemption round gives you. The grader puts its own copy next to your train.py.

    from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order

Classification into CLASSES classes. `TrainSet()` has DATASET_SIZE samples; item i is
`(i, x, label)`: its index, a float32 feature vector of FEATURES values and an int64 label.
Use BATCH_SIZE samples per rank per step: import it, never write its value.

The data order is fixed: epoch e reads `epoch_order(e)` (a permutation of the sample ids) from
its start, W * BATCH_SIZE ids per optimizer step (global step k of the epoch: the ids
[k*W*B, (k+1)*W*B), rank r the r-th B of them); a remainder shorter than W * BATCH_SIZE is
dropped and the next epoch starts. Where a run is in that order is yours to keep.

Samples are read one way only: `dataset[i]`, or `dataset.__getitems__(ids)` (what a DataLoader
calls for a batch). The grader observes every such read. The dataset holds no tensors: a
sample's values exist only as it is read, and under the grader they are drawn per run.
"""

from __future__ import annotations

import random

import torch
from torch.utils.data import Dataset

DATASET_SIZE = 44  # not a multiple of W * BATCH_SIZE at W=2: each epoch drops a remainder
FEATURES = 8
CLASSES = 3
BATCH_SIZE = 4
ORDER_SEED = 17

SEED = 0  # the values outside the grader


def epoch_order(epoch: int) -> list[int]:
    """The sample ids of epoch `epoch` (0, 1, 2, ...), in the order they are read."""
    order = list(range(DATASET_SIZE))
    random.Random(ORDER_SEED + epoch).shuffle(order)
    return order


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


class TrainSet(Dataset):
    def __len__(self) -> int:
        return DATASET_SIZE

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        i = int(index)
        if not 0 <= i < DATASET_SIZE:
            raise IndexError(f"sample {i} out of range (0..{DATASET_SIZE - 1})")
        x, label = _fetch(i)
        return i, x, label

    def __getitems__(self, indices: list[int]) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
        return [self[i] for i in indices]
