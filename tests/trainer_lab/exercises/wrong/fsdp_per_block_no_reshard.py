"""Wrong: one group per block and the root last, but every group keeps its parameters gathered
after forward (reshard_after_forward=False), so the whole model ends up gathered."""

from torch.distributed.fsdp import fully_shard


def shard(model, mesh):
    for block in model.blocks:
        fully_shard(block, mesh=mesh, reshard_after_forward=False)
    fully_shard(model, mesh=mesh, reshard_after_forward=False)
