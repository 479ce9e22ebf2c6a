# WRONG (class: RNG not restored for the recomputation). Non-reentrant checkpoint but with
# preserve_rng_state=False: the block's dropout draws a NEW mask when it is recomputed in backward,
# so the gradients belong to a different mask than the forward output. A good checker must FAIL
# (gradients differ from the plain block with dropout).
# Modern style: functools.partial-bound checkpoint.
import functools

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

_ckpt = functools.partial(checkpoint, use_reentrant=False, preserve_rng_state=False)


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ckpt(self.block, x)
