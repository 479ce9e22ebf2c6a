"""Wrong: each micro-batch's loss is divided by its size (len(x)) instead of the number of
micro-batches k. When every micro-batch holds k samples the two agree, so only micro-batches of
another size than k show it."""

import contextlib

import torch
from torch import nn


def accumulate_step(
    ddp_model: nn.Module, optimizer: torch.optim.Optimizer, micro_batches: list
) -> None:
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        with contextlib.nullcontext() if last else ddp_model.no_sync():
            (nn.functional.mse_loss(ddp_model(x), y) / len(x)).backward()
    optimizer.step()
