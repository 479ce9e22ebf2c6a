# RIGHT. torch.utils.checkpoint.checkpoint with use_reentrant=False: forward runs the block
# without saving its intermediate activations (only the input), backward recomputes them; works
# even when the input does not require grad, gives parameters their gradients, and preserves the
# RNG state for dropout by default.
# Modern style: functools.partial-bound checkpoint function.
import functools

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block
        self._ckpt = functools.partial(checkpoint, use_reentrant=False, preserve_rng_state=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._ckpt(self.block, x)
