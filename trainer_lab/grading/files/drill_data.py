"""The dataset the coding round gives you. The grader puts its own copy next to your train.py.

    from drill_data import BATCH_SIZE, DATASET_SIZE, FEATURES, ToyDataset

A map-style dataset of DATASET_SIZE samples. Item i is `(i, x, y)`: the sample id (an int), a
float32 feature vector of FEATURES values and a float32 target of shape (1,), a noisy smooth
function of x (regression: mean squared error works). Use BATCH_SIZE samples per rank per step.
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

DATASET_SIZE = 48
FEATURES = 8
BATCH_SIZE = 4

# The grader sets this to a function of the sample id to see which ids each rank fetched.
_on_fetch = None
# The grader sets this to draw other data for some runs (training must depend on the data).
_variant = None


class ToyDataset(Dataset):
    def __init__(self, size: int = DATASET_SIZE, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(size, FEATURES, generator=g)
        w = torch.randn(FEATURES, 1, generator=g)
        self.y = torch.tanh(self.x @ w) + 0.05 * torch.randn(size, 1, generator=g)
        if _variant == "constant":  # every item the same (x, y), drawn from another seed
            g = torch.Generator().manual_seed(seed + 1000)
            x = torch.randn(1, FEATURES, generator=g)
            self.x = x.expand(size, FEATURES).clone()
            self.y = torch.tanh(x @ w).expand(size, 1).clone()

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        i = int(index)
        if _on_fetch is not None:
            _on_fetch(i)
        return i, self.x[i], self.y[i]
