# WRONG (class: no overlap -- all communication deferred to wait()). The hooks only record which
# gradients are ready and form correctly sized buckets; every all_reduce is launched in wait(),
# after backward. Numerically right, but nothing overlaps with backward, which is the point of
# the exercise. A good checker must FAIL (no collective started during backward).
# Modern style: itertools-free generator of buckets, dataclass-free tuples.
import torch
import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self._buckets: list[list[torch.Tensor]] = [[]]
        self._bytes = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._hook)

    def _hook(self, p: torch.Tensor) -> None:
        size = p.grad.numel() * p.grad.element_size()
        if self._buckets[-1] and self._bytes + size > self.bucket_bytes:
            self._buckets.append([])
            self._bytes = 0
        self._buckets[-1].append(p.grad)
        self._bytes += size

    def wait(self) -> None:
        world = dist.get_world_size()
        pending = []
        for grads in filter(None, self._buckets):
            flat = torch.cat([g.reshape(-1) for g in grads])
            pending.append((dist.all_reduce(flat, async_op=True), flat, grads))
        for work, flat, grads in pending:
            work.wait()
            flat /= world
            for g, piece in zip(grads, flat.split([g.numel() for g in grads])):
                g.copy_(piece.view_as(g))
        self._buckets, self._bytes = [[]], 0
