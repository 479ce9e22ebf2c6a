"""One group per block (gathered before its forward, freed after it), then the root: the root
group owns what no block owns (the head) and drives the whole step."""

from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard


def shard(model: nn.Module, mesh: DeviceMesh) -> None:
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
