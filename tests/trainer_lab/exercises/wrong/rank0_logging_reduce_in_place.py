"""Wrong: all-reduces the caller's loss itself (under no_grad): the line is right, but the
caller's loss now holds the sum over ranks."""

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    with torch.no_grad():
        dist.all_reduce(loss)
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item() / dist.get_world_size():.4f}")
