"""Wrong: every rank joins the all_reduce and decides from the mean, but stops when the mean is at
or below the threshold (<=): a mean exactly equal to the threshold is not below it."""

import torch
import torch.distributed as dist


def should_stop(local_val_loss, threshold):
    total = torch.tensor(float(local_val_loss), dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / dist.get_world_size() <= threshold
