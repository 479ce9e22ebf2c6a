"""Right, another style: the buckets are planned once over the parameters in model order (not
the order backward produces their gradients), greedily up to bucket_bytes; each bucket keeps a
preallocated buffer and a count of the gradients still missing, and is launched the moment the
count reaches zero. The packing differs from arrival order; the exercise allows any."""

import torch
import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        params = [p for p in model.parameters() if p.requires_grad]
        self.buckets: list[list[nn.Parameter]] = [[]]
        size = 0
        for p in params:
            nbytes = p.numel() * p.element_size()
            if self.buckets[-1] and size + nbytes > bucket_bytes:
                self.buckets.append([])
                size = 0
            self.buckets[-1].append(p)
            size += nbytes
        self.where = {id(p): b for b, bucket in enumerate(self.buckets) for p in bucket}
        self.buffers = [torch.zeros(sum(p.numel() for p in bucket)) for bucket in self.buckets]
        self.missing = [len(bucket) for bucket in self.buckets]
        self.works: dict[int, dist.Work] = {}
        for p in params:
            p.register_post_accumulate_grad_hook(self._ready)

    def _ready(self, p: nn.Parameter) -> None:
        b = self.where[id(p)]
        self.missing[b] -= 1
        if self.missing[b] == 0:
            buffer, offset = self.buffers[b], 0
            for q in self.buckets[b]:
                buffer[offset : offset + q.numel()] = q.grad.reshape(-1)
                offset += q.numel()
            self.works[b] = dist.all_reduce(buffer, async_op=True)

    def wait(self) -> None:
        world = dist.get_world_size()
        for b, work in sorted(self.works.items()):
            work.wait()
            offset = 0
            for q in self.buckets[b]:
                q.grad.copy_(self.buffers[b][offset : offset + q.numel()].view_as(q) / world)
                offset += q.numel()
        self.works = {}
        self.missing = [len(bucket) for bucket in self.buckets]
