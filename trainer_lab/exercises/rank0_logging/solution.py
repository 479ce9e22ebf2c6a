"""The collective runs on every rank; only the print is rank 0's."""

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    total = loss.detach().clone()
    dist.all_reduce(total)  # every rank joins, or rank 0 waits for ever
    if dist.get_rank() == 0:
        print(f"step {step} loss {total.item() / dist.get_world_size():.4f}")
