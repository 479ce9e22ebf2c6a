# RIGHT. gather_object to rank 0 (every rank calls it; only dst passes a list), then rank 0 prints
# the mean. Modern style: object collectives + statistics.fmean, logging-free print.
import statistics

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    rank = dist.get_rank()
    bucket = [None] * dist.get_world_size() if rank == 0 else None
    dist.gather_object(float(loss.detach()), bucket, dst=0)
    if rank == 0:
        print(f"step {step} loss {statistics.fmean(bucket):.4f}", flush=True)
