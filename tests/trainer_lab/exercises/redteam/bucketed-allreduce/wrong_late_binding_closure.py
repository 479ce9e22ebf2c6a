# WRONG (class: Python late-binding closure in a hook loop). Static buckets like DDP, but each
# hook is `lambda _: self._ready(i)` created in a for loop: every hook sees the LAST i, so only
# the last parameter's bucket ever counts up (to len(params), never == its size except by luck),
# the other buckets are never launched during backward, and wait()'s fallback only launches
# buckets that counted something. A good checker must FAIL (grads not averaged and/or no overlap).
# Modern style: lambda hooks, enumerate.
import torch
import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self.bucket_of: list[int] = []
        self.buckets: list[list[int]] = [[]]
        used = 0
        for i, p in enumerate(self.params):
            size = p.numel() * p.element_size()
            if self.buckets[-1] and used + size > bucket_bytes:
                self.buckets.append([])
                used = 0
            self.buckets[-1].append(i)
            self.bucket_of.append(len(self.buckets) - 1)
            used += size
        self.count = [0] * len(self.buckets)
        self.inflight = {}
        for i, p in enumerate(self.params):
            p.register_post_accumulate_grad_hook(lambda _: self._ready(i))

    def _launch(self, b: int) -> None:
        grads = [self.params[i].grad for i in self.buckets[b]]
        flat = torch.cat([g.reshape(-1) for g in grads])
        self.inflight[b] = (dist.all_reduce(flat, async_op=True), flat, grads)

    def _ready(self, i: int) -> None:
        b = self.bucket_of[i]
        self.count[b] += 1
        if self.count[b] == len(self.buckets[b]):
            self._launch(b)

    def wait(self) -> None:
        for b, c in enumerate(self.count):
            if c and b not in self.inflight:
                self._launch(b)
        world = dist.get_world_size()
        for work, flat, grads in self.inflight.values():
            work.wait()
            flat /= world
            for g, piece in zip(grads, flat.split([g.numel() for g in grads])):
                g.copy_(piece.view_as(g))
        self.inflight.clear()
        self.count = [0] * len(self.buckets)
