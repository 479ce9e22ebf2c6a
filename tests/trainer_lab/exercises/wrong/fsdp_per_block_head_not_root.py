"""Wrong: every block and the head get a fully_shard group, but the root model is never wrapped,
so each group is a root of its own and keeps its parameters gathered until backward (every
parameter is sharded, so nothing stays plain)."""

from torch.distributed.fsdp import fully_shard


def shard(model, mesh):
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model.head, mesh=mesh)
