# WRONG (class: no reduction -- prints rank 0's own loss). "Fixes" the deadlock with a barrier
# every rank reaches, but the printed value is rank 0's local loss, not the mean.
# A good checker must FAIL (wrong value).
# Modern style: barrier as the sync point.
import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    dist.barrier()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
