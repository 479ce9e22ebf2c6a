"""Wrong: a hand-written torch.autograd.Function that reruns the block in backward without
restoring the RNG state the forward ran with, so a block that draws random numbers (dropout)
recomputes with other masks and its gradients are not the forward's."""

import torch
from torch import nn


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, block: nn.Module, *params: torch.Tensor) -> torch.Tensor:
        ctx.block = block
        ctx.save_for_backward(x)
        with torch.no_grad():
            return block(x)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_(True)
        params = list(ctx.block.parameters())
        with torch.enable_grad():
            out = ctx.block(x)
        grads = torch.autograd.grad(out, [x, *params], grad_out, allow_unused=True)
        return (grads[0], None, *grads[1:])


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _Checkpoint.apply(x, self.block, *self.block.parameters())
