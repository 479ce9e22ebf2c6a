# WRONG (class: wrong wrapping order -- root before children). fully_shard(model) first puts every
# parameter into the root's group; the later per-block calls then either error or leave the
# blocks' parameters owned by the root, so forward gathers everything at once. A good checker must
# FAIL (error, or whole-model all-gather).
# Modern style: reversed iteration of named children.
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard


def shard(model: nn.Module, mesh: DeviceMesh) -> None:
    fully_shard(model, mesh=mesh)
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
