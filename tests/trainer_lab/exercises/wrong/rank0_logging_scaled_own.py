"""Wrong: no collective; rank 0 prints its own loss scaled by a guessed factor."""

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item() * 1.25:.4f}")
