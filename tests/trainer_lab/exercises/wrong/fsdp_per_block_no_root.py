"""Wrong: every block is its own group, but the root is never wrapped (the head stays a plain,
unsynchronised replica)."""

from torch.distributed.fsdp import fully_shard


def shard(model, mesh):
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
