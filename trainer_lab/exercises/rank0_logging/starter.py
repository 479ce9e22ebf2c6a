"""Every rank calls report(step, loss) after each step. Rank 0 must print exactly
`step {step} loss {mean:.4f}` where mean is the average of all ranks' losses; the others print
nothing. This version hangs: find out why. Run `drill exercise check rank0-logging`."""

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    if dist.get_rank() == 0:
        total = loss.detach().clone()
        dist.all_reduce(total)
        print(f"step {step} loss {total.item() / dist.get_world_size():.4f}")
