# WRONG (class: wrong reduction semantics). Fixes the hang (everyone calls all_reduce) but reduces
# a vote with MIN: it stops only when EVERY rank's loss is below threshold, not when the MEAN is.
# With losses (0.1, 0.9) and threshold 0.6 the mean 0.5 is below, yet this returns False.
# A good checker must FAIL (wrong answer, not a hang).
# Modern style: ReduceOp.MIN vote on an int tensor.
import torch
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    vote = torch.tensor([int(local_val_loss < threshold)])
    dist.all_reduce(vote, op=dist.ReduceOp.MIN)
    return bool(vote.item())
