# WRONG (class: decision from one rank's local data). Rank 0 compares ITS OWN loss to the
# threshold and broadcasts the decision: consistent across ranks (no hang), but it ignores the
# other ranks' losses. A good checker must FAIL (answer differs from mean<threshold).
# Modern style: broadcast_object_list.
import torch.distributed as dist


def should_stop(local_val_loss: float, threshold: float) -> bool:
    decision = [local_val_loss < threshold]
    dist.broadcast_object_list(decision, src=0)
    return bool(decision[0])
