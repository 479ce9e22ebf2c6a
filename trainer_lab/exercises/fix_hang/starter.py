"""Early stopping across ranks. Every rank calls should_stop(local_val_loss, threshold) and all
must get the same answer: True when the mean validation loss over all ranks is below threshold.
This version hangs on some inputs. Run `drill exercise check fix-hang`."""

import torch
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    if local_val_loss < threshold:
        votes = torch.tensor(1.0)
        dist.all_reduce(votes)
        return votes.item() == dist.get_world_size()
    return False
