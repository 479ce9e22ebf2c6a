"""Wrong: the print is guarded by the node-local rank (LOCAL_RANK). On one node it equals the
global rank; with several nodes every node has a LOCAL_RANK 0, and each of them prints."""

import os

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    total = loss.detach().clone()
    dist.all_reduce(total)
    if int(os.environ.get("LOCAL_RANK", "0")) == 0:
        print(f"step {step} loss {total.item() / dist.get_world_size():.4f}")
