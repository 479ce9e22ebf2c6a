"""Right, another style: walk the modules and wrap whatever is a block (any module that is an
item of model.blocks) bottom-up, with an explicit reshard_after_forward=True, then the root."""

from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard


def shard(model: nn.Module, mesh: DeviceMesh) -> None:
    blocks = {id(b) for b in model.blocks}  # type: ignore[union-attr]
    for module in reversed(list(model.modules())):  # children before their parents
        if id(module) in blocks:
            fully_shard(module, mesh=mesh, reshard_after_forward=True)
    fully_shard(model, mesh=mesh, reshard_after_forward=True)
