# WRONG (class: drops data to avoid the hang). All-reduces the batch count with MIN and trains only
# on that many batches: no hang, replicas in sync, but rank 1's extra batches are never trained
# on. A good checker must FAIL ("train on every batch").
# Modern style: itertools.islice.
import itertools

import torch
import torch.distributed as dist
from torch import nn


def train_epoch(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, batches: list) -> None:
    n = torch.tensor([len(batches)])
    dist.all_reduce(n, op=dist.ReduceOp.MIN)
    for x, y in itertools.islice(batches, int(n)):
        optimizer.zero_grad()
        nn.functional.mse_loss(ddp_model(x), y).backward()
        optimizer.step()
