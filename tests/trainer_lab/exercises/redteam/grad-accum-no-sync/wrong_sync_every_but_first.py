# WRONG (class: no_sync on the wrong micro-batches -- off-by-one). Only the FIRST micro-batch runs
# under no_sync; every later backward triggers DDP's all-reduce, so k-1 all-reduces per step
# instead of one. The final gradient is still right (all-reducing a running sum of averages then
# adding averaged increments ... is linear), so only the communication count is wrong. A good
# checker must FAIL on "one all-reduce per step" for k > 2.
# Modern style: itertools.islice head/rest split.
import itertools

import torch
from torch import nn


def accumulate_step(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, micro_batches: list) -> None:
    k = len(micro_batches)
    optimizer.zero_grad()
    it = iter(micro_batches)
    with ddp_model.no_sync():
        for x, y in itertools.islice(it, 1):
            (nn.functional.mse_loss(ddp_model(x), y) / k).backward()
    for x, y in it:
        (nn.functional.mse_loss(ddp_model(x), y) / k).backward()
    optimizer.step()
