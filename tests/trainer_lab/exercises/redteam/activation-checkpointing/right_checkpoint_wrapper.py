# RIGHT. Uses torch's checkpoint_wrapper (the one FSDP/TorchTitan apply per block), which wraps
# the block in a module that calls torch.utils.checkpoint non-reentrantly. Keeps the "block"
# attribute name. Modern style: library wrapper module (torch.distributed.algorithms._checkpoint).
import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper


class CheckpointedBlock(nn.Module):
    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block
        # kept in a tuple so the same parameters are not registered twice (no duplicate state_dict keys)
        self._wrapped = (checkpoint_wrapper(block, checkpoint_impl=CheckpointImpl.NO_REENTRANT),)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._wrapped[0](x)
