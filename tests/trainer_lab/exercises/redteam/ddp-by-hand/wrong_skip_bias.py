# WRONG (class: partial sync -- some parameters' gradients are never all-reduced).
# "Biases are tiny, only sync the weight matrices": parameters with ndim < 2 keep their local
# gradient, so the replicas' biases drift apart. A good checker must FAIL (params not in sync /
# not matching the reference).
# Modern style: generator expression + walrus filter.
import torch.distributed as dist
from torch import nn


def sync_gradients(model: nn.Module) -> None:
    world = dist.get_world_size()
    for g in (p.grad for p in model.parameters() if p.grad is not None and p.ndim >= 2):
        dist.all_reduce(g)
        g /= world
