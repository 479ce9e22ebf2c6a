# WRONG (class: side effect on the caller's tensor). all_reduce is called on `loss` itself
# (detach() shares storage), so after report() every rank's loss tensor holds the SUM over
# ranks; the caller's later use of loss (logging, early stopping, a second report) is corrupted.
# The printed line is correct. A good checker must FAIL if it checks the input is unmodified.
# Modern style: torch.no_grad context manager.
import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    with torch.no_grad():
        total = loss.detach()
        dist.all_reduce(total)
        if dist.get_rank() == 0:
            print(f"step {step} loss {total.item() / dist.get_world_size():.4f}", flush=True)
