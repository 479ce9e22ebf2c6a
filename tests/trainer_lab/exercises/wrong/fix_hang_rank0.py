"""Wrong: no hang, the ranks agree, but rank 0 decides from its own loss and broadcasts it."""

import torch
import torch.distributed as dist


def should_stop(local_val_loss, threshold):
    decision = torch.tensor(1 if local_val_loss < threshold else 0)
    dist.broadcast(decision, src=0)
    return bool(decision.item())
