# WRONG (class: reentrant checkpoint with an input that does not require grad). use_reentrant=True
# is the legacy default: if x does not require grad (first layer, raw data), the checkpointed
# output does not require grad either and the block's parameters get NO gradient (torch only
# warns). A good checker must FAIL (missing/zero parameter grads) when fed such an input.
# Modern style: explicit keyword, still reentrant.
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(self.block, x, use_reentrant=True)
