# RIGHT. Each local gradient is viewed as a DTensor with a Partial (pending-sum) placement on a
# 1-D DeviceMesh over all ranks, redistributed to Replicate (that is an all-reduce SUM), then
# divided by W and written back into .grad. The mesh is built once and cached.
# Modern style: DTensor / DeviceMesh placements (Partial -> Replicate).
import functools

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Partial, Replicate


@functools.cache
def _mesh(world: int) -> DeviceMesh:
    return DeviceMesh("cpu", torch.arange(world))


def sync_gradients(model: nn.Module) -> None:
    world = dist.get_world_size()
    mesh = _mesh(world)
    for p in model.parameters():
        if p.grad is None:
            continue
        d = DTensor.from_local(p.grad, mesh, [Partial()], run_check=False)
        summed = d.redistribute(mesh, [Replicate()]).to_local()
        p.grad.copy_(summed / world)
