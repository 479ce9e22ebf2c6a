# RIGHT. Unconditional all_reduce(SUM) of a float64 tensor, divided by the world size; every rank
# gets the same bits so the comparison agrees everywhere.
# Modern style: torch.tensor(..., dtype=float64) + context-free functional one-liner.
import torch
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    total = torch.tensor([float(local_val_loss)], dtype=torch.float64)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return bool((total / dist.get_world_size()).item() < threshold)
