# RIGHT. zero_grad, then every micro-batch but the last runs under ddp_model.no_sync() (chosen
# with contextlib.nullcontext for the last one, which triggers DDP's single all-reduce). Each
# micro-loss is divided by k: equal-sized micro-batches, so mean of means == mean over the
# concatenation. Then one optimizer step.
# Modern style: contextlib.nullcontext + enumerate with a last-flag.
import contextlib

from torch import nn
import torch


def accumulate_step(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, micro_batches: list) -> None:
    k = len(micro_batches)
    optimizer.zero_grad(set_to_none=True)
    for i, (x, y) in enumerate(micro_batches):
        ctx = contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync()
        with ctx:
            (nn.functional.mse_loss(ddp_model(x), y) / k).backward()
    optimizer.step()
