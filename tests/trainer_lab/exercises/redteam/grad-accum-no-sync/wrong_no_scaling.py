# WRONG (class: loss not scaled by k). no_sync is used correctly (one all-reduce) but each micro
# loss is backpropagated unscaled, so the accumulated gradient is k x the gradient of the mean
# over the concatenation. A good checker must FAIL (step k x too large, for SGD).
# Modern style: contextlib.ExitStack.
import contextlib

import torch
from torch import nn


def accumulate_step(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, micro_batches: list) -> None:
    optimizer.zero_grad()
    last = len(micro_batches) - 1
    for i, (x, y) in enumerate(micro_batches):
        with contextlib.ExitStack() as stack:
            if i != last:
                stack.enter_context(ddp_model.no_sync())
            nn.functional.mse_loss(ddp_model(x), y).backward()
    optimizer.step()
