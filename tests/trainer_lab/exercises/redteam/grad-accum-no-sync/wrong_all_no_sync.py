# WRONG (class: no all-reduce at all). Every micro-batch, including the last, runs under
# no_sync(), so DDP never all-reduces: each rank steps with its own local gradient and the
# replicas diverge. A good checker must FAIL (0 all-reduces; replicas differ).
# Modern style: single with-block around the loop.
import torch
from torch import nn


def accumulate_step(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, micro_batches: list) -> None:
    k = len(micro_batches)
    optimizer.zero_grad()
    with ddp_model.no_sync():
        for x, y in micro_batches:
            (nn.functional.mse_loss(ddp_model(x), y) / k).backward()
    optimizer.step()
