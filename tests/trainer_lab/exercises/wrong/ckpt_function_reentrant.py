"""Wrong: the reentrant checkpoint Function applied directly: with an input that does not
require grad, its output does not either, so the block's parameters get no gradient."""

import torch
from torch import nn
from torch.utils.checkpoint import CheckpointFunction


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return CheckpointFunction.apply(self.block, True, x)
