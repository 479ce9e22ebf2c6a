"""Right, another style: under Join, each step also logs the loss of a no-grad evaluation forward
before training on the batch, so the model runs forward twice per batch."""

import torch
from torch import nn
from torch.distributed.algorithms.join import Join


def train_epoch(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, batches: list) -> None:
    module = ddp_model.module  # type: ignore[union-attr]
    losses: list[float] = []  # what a real loop would log
    with Join([ddp_model]):
        for x, y in batches:
            with torch.no_grad():
                losses.append(nn.functional.mse_loss(module(x), y).item())
            optimizer.zero_grad()
            nn.functional.mse_loss(ddp_model(x), y).backward()
            optimizer.step()
