"""Every rank joins the same collective, whatever its own loss; the decision follows from it."""

import torch
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    total = torch.tensor(float(local_val_loss), dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / dist.get_world_size() < threshold
