"""Right, another style: a hand-written torch.autograd.Function. Forward runs the block under
no_grad and saves only the input; backward reruns the block with grad enabled and takes the
gradients of the input and the parameters with torch.autograd.grad. The CPU RNG state is saved
before the forward and replayed (under fork_rng, so the caller's RNG stream is left as it was)
for the rerun, so dropout draws the same masks."""

import torch
from torch import nn


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, block: nn.Module, *params: torch.Tensor) -> torch.Tensor:
        ctx.block = block
        ctx.rng_state = torch.get_rng_state()
        ctx.save_for_backward(x)
        with torch.no_grad():
            return block(x)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_(True)
        params = list(ctx.block.parameters())
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            torch.set_rng_state(ctx.rng_state)
            out = ctx.block(x)
        grads = torch.autograd.grad(out, [x, *params], grad_out, allow_unused=True)
        return (grads[0], None, *grads[1:])


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _Checkpoint.apply(x, self.block, *self.block.parameters())
