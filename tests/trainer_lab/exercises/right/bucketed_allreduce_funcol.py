"""Right: buckets all-reduced with functional collectives (torch.distributed.
_functional_collectives): the call returns at once (an AsyncCollectiveTensor); wait() waits on
each and copies back."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self.bucket: list[nn.Parameter] = []
        self.size = 0
        self.ready = 0
        self.pending: list[tuple[torch.Tensor, list[nn.Parameter]]] = []
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._on_grad)

    def _on_grad(self, p: nn.Parameter) -> None:
        nbytes = p.grad.numel() * p.grad.element_size()
        if self.bucket and self.size + nbytes > self.bucket_bytes:
            self._launch()
        self.bucket.append(p)
        self.size += nbytes
        self.ready += 1
        if self.ready == len(self.params):
            self._launch()

    def _launch(self) -> None:
        flat = torch.cat([p.grad.reshape(-1) for p in self.bucket])
        reduced = funcol.all_reduce(flat, "sum", dist.group.WORLD)
        self.pending.append((reduced, self.bucket))
        self.bucket, self.size = [], 0

    def wait(self) -> None:
        world = dist.get_world_size()
        for reduced, params in self.pending:
            flat = funcol.wait_tensor(reduced) / world
            offset = 0
            for p in params:
                n = p.grad.numel()
                p.grad.copy_(flat[offset : offset + n].view_as(p.grad))
                offset += n
        self.pending, self.ready = [], 0
