# RIGHT. DDP's design: buckets are fixed at construction, filled in reverse parameter order
# (roughly the order backward produces gradients), each at most bucket_bytes (a single parameter
# larger than bucket_bytes gets a bucket of its own). A post-accumulate-grad hook counts the
# ready parameters of its bucket; when the last one arrives the bucket is flattened and an async
# SUM all_reduce is launched, during backward. wait() launches any bucket that never filled
# (unused parameters), waits the handles, divides by W and copies the slices back into .grad.
# Modern style: dataclass buckets, register_post_accumulate_grad_hook, flatten helpers.
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch import nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


@dataclass
class _Bucket:
    params: list = field(default_factory=list)
    nbytes: int = 0
    ready: int = 0
    flat: torch.Tensor | None = None
    work: object = None


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self.buckets: list[_Bucket] = []
        self._owner: dict[int, _Bucket] = {}
        cur = _Bucket()
        for p in reversed(self.params):
            size = p.numel() * p.element_size()
            if cur.params and cur.nbytes + size > bucket_bytes:
                self.buckets.append(cur)
                cur = _Bucket()
            cur.params.append(p)
            cur.nbytes += size
            self._owner[id(p)] = cur
        if cur.params:
            self.buckets.append(cur)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._on_grad)

    def _on_grad(self, p: torch.Tensor) -> None:
        b = self._owner[id(p)]
        b.ready += 1
        if b.ready == len(b.params):
            self._launch(b)

    def _launch(self, b: _Bucket) -> None:
        grads = [p.grad for p in b.params if p.grad is not None]
        if not grads:
            return
        b.flat = _flatten_dense_tensors(grads)
        b.work = dist.all_reduce(b.flat, async_op=True)

    def wait(self) -> None:
        world = dist.get_world_size()
        for b in self.buckets:
            if b.work is None and b.ready:
                self._launch(b)
        for b in self.buckets:
            if b.work is not None:
                b.work.wait()
                b.flat /= world
                grads = [p.grad for p in b.params if p.grad is not None]
                for g, s in zip(grads, _unflatten_dense_tensors(b.flat, grads)):
                    g.copy_(s)
            b.ready, b.flat, b.work = 0, None, None
