# RIGHT. Dynamic packing in the order gradients actually arrive: the hook appends the gradient
# to the open bucket; if it would push the bucket past bucket_bytes, the open bucket is launched
# first (async SUM all_reduce on a flat copy) and a new one is opened. A bucket that reaches
# exactly bucket_bytes is launched immediately. wait() launches the trailing partial bucket,
# waits every handle, divides by W and copies back. Every rank sees the same backward order,
# so the collectives line up.
# Modern style: small class with an inner list-of-tuples queue, itertools.accumulate free,
# torch.cat/split instead of private flatten helpers.
import torch
import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self._open: list[torch.Tensor] = []
        self._open_bytes = 0
        self._inflight: list[tuple[object, torch.Tensor, list[torch.Tensor]]] = []
        self._hooks = [p.register_post_accumulate_grad_hook(self._hook) for p in self.params]

    def _flush(self) -> None:
        if not self._open:
            return
        grads, self._open, self._open_bytes = self._open, [], 0
        flat = torch.cat([g.reshape(-1) for g in grads])
        self._inflight.append((dist.all_reduce(flat, async_op=True), flat, grads))

    def _hook(self, p: torch.Tensor) -> None:
        size = p.grad.numel() * p.grad.element_size()
        if self._open and self._open_bytes + size > self.bucket_bytes:
            self._flush()
        self._open.append(p.grad)
        self._open_bytes += size
        if self._open_bytes >= self.bucket_bytes:
            self._flush()

    def wait(self) -> None:
        self._flush()
        world = dist.get_world_size()
        for work, flat, grads in self._inflight:
            work.wait()
            flat /= world
            for g, piece in zip(grads, flat.split([g.numel() for g in grads])):
                g.copy_(piece.view_as(g))
        self._inflight.clear()
