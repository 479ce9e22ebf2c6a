"""Wrong: no_sync is right, but the loss is not divided by the number of micro-batches."""

import contextlib

from torch import nn


def accumulate_step(ddp_model, optimizer, micro_batches):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        with contextlib.nullcontext() if last else ddp_model.no_sync():
            nn.functional.mse_loss(ddp_model(x), y).backward()
    optimizer.step()
