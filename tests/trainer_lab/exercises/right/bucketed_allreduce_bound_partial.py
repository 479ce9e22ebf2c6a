"""Right, another style: the all-reduce is bound once at import (a functools.partial of
dist.all_reduce with async_op=True, under another name), and the buckets are otherwise packed in
arrival order as DDP does."""

import functools

import torch
import torch.distributed as dist
from torch import nn

start_allreduce = functools.partial(dist.all_reduce, async_op=True)


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self.bucket: list[nn.Parameter] = []
        self.size = 0  # bytes in the open bucket
        self.ready = 0  # gradients seen this backward
        self.pending: list[tuple[dist.Work, torch.Tensor, list[nn.Parameter]]] = []
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._on_grad)

    def _on_grad(self, p: nn.Parameter) -> None:
        nbytes = p.grad.numel() * p.grad.element_size()
        if self.bucket and self.size + nbytes > self.bucket_bytes:
            self._launch()
        self.bucket.append(p)
        self.size += nbytes
        self.ready += 1
        if self.ready == len(self.params):  # the last gradient: flush what is left
            self._launch()

    def _launch(self) -> None:
        flat = torch.cat([p.grad.reshape(-1) for p in self.bucket])
        work = start_allreduce(flat)
        self.pending.append((work, flat, self.bucket))
        self.bucket, self.size = [], 0

    def wait(self) -> None:
        world = dist.get_world_size()
        for work, flat, params in self.pending:
            work.wait()
            flat /= world
            offset = 0
            for p in params:
                n = p.grad.numel()
                p.grad.copy_(flat[offset : offset + n].view_as(p.grad))
                offset += n
        self.pending, self.ready = [], 0
