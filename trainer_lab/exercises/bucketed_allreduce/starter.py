"""Bucketed gradient all-reduce, DDP's way. Make the gradients the average over all ranks, as
this version does, but group them into buckets of at most bucket_bytes and start each bucket's
all-reduce during backward, as soon as it is full. wait() runs after backward, before the
optimizer step. Run `drill exercise check bucketed-allreduce`."""

import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        # TODO: a post-accumulate-grad hook on every parameter that fills the current bucket

    def wait(self) -> None:
        # TODO: only wait for the buckets launched during backward, then average
        world = dist.get_world_size()
        for p in self.params:
            dist.all_reduce(p.grad)
            p.grad /= world
