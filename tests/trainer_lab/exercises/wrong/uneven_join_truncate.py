"""Wrong: no hang and in sync, but every rank stops at the shortest rank's count (drops data)."""

import torch
import torch.distributed as dist
from torch import nn


def train_epoch(ddp_model, optimizer, batches):
    n = torch.tensor(len(batches))
    dist.all_reduce(n, op=dist.ReduceOp.MIN)
    for x, y in batches[: int(n)]:
        optimizer.zero_grad()
        nn.functional.mse_loss(ddp_model(x), y).backward()
        optimizer.step()
