# WRONG (class: missing wait on an async collective). Launches every all_reduce with
# async_op=True and divides right away, never waiting on the work handles: the division races
# the reduction (and the optimizer may read a half-reduced gradient). A good checker must FAIL
# (or at least not be fooled by timing luck; the divide happens before the sum lands).
# Modern style: async collectives in a list comprehension.
import torch.distributed as dist
from torch import nn


def sync_gradients(model: nn.Module) -> None:
    world = dist.get_world_size()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    _handles = [dist.all_reduce(g, async_op=True) for g in grads]
    for g in grads:
        g /= world
