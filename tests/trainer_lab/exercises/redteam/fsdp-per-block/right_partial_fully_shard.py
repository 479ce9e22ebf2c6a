# RIGHT. functools.partial binds mesh (and the default reshard_after_forward=True, written out),
# applied bottom-up: each block is its own FSDP2 group, then the root (which picks up the head
# and anything left). Each rank holds 1/W of every parameter as a DTensor shard; forward
# all-gathers one block at a time and reshards it after.
# Modern style: functools.partial + FSDP2 (fully_shard) + DeviceMesh.
import functools

from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard


def shard(model: nn.Module, mesh: DeviceMesh) -> None:
    wrap = functools.partial(fully_shard, mesh=mesh, reshard_after_forward=True)
    for block in model.blocks:
        wrap(block)
    wrap(model)
