"""Join lets the rank that finished early shadow its peers' all-reduces until all are done."""

import torch
from torch import nn
from torch.distributed.algorithms.join import Join


def train_epoch(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, batches: list) -> None:
    with Join([ddp_model]):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.mse_loss(ddp_model(x), y).backward()
            optimizer.step()
