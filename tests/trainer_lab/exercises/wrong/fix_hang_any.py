"""Wrong: no hang, the ranks agree, but it stops as soon as any one rank is below the threshold
(the smallest loss decides), not when the mean is."""

import torch
import torch.distributed as dist


def should_stop(local_val_loss, threshold):
    best = torch.tensor(float(local_val_loss))
    dist.all_reduce(best, op=dist.ReduceOp.MIN)
    return best.item() < threshold
