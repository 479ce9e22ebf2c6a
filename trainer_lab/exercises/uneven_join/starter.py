"""Ranks hold different numbers of batches (rank 1 has more). Train on every batch of this rank
with the DDP model, and return when done. This version hangs.
Run `drill exercise check uneven-join`."""

import torch
from torch import nn


def train_epoch(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, batches: list) -> None:
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(ddp_model(x), y).backward()
        optimizer.step()
