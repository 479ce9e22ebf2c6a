# WRONG (class: "saves memory" by cutting the graph). Runs the block under no_grad and re-enables
# grad on the output: no activations are stored, but nothing is recomputed either -- the output
# is a leaf, so neither the block's parameters nor x get gradients. A good checker must FAIL
# (gradients differ from the unwrapped block).
# Modern style: torch.inference_mode-free no_grad context + requires_grad_().
import torch
from torch import nn


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            out = self.block(x)
        return out.requires_grad_()
