# WRONG (class: guard on LOCAL_RANK instead of the global rank). Collective is unconditional
# (no deadlock) but the print is guarded by LOCAL_RANK == 0: on a multi-node job rank 0 of EVERY
# node prints. Single-node it coincides with rank 0, so a checker that runs one node cannot see
# it unless it sets LOCAL_RANK differently from RANK; if the checker does not set LOCAL_RANK at
# all this crashes with KeyError. Intended verdict: FAIL.
# Modern style: os.environ lookup, typed int parse.
import os

import torch
import torch.distributed as dist


def report(step: int, loss: torch.Tensor) -> None:
    total = loss.detach().clone()
    dist.all_reduce(total)
    if int(os.environ["LOCAL_RANK"]) == 0:
        print(f"step {step} loss {total.item() / dist.get_world_size():.4f}", flush=True)
