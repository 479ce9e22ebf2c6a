# WRONG (class: boundary off-by-one, <= instead of <). Unconditional all_reduce, correct mean, but
# stops when the mean EQUALS the threshold; the brief says "below". A good checker must FAIL on a
# case where the mean is exactly the threshold (if it has one).
# Modern style: math.fsum over all_gather'ed tensors.
import math

import torch
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    parts = [torch.zeros(1, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, torch.tensor([float(local_val_loss)], dtype=torch.float64))
    return math.fsum(t.item() for t in parts) / len(parts) <= threshold
