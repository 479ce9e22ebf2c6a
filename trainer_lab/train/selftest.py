"""Launcher self-test tasks (imports torch): a healthy all-reduce, a hang, a crash.

Used by the launcher tests and handy to check a machine: see trainer_lab/README.md.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext


def ok(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    value = torch.tensor([float(ctx.rank + 1)], device=ctx.device)
    dist.all_reduce(value)
    ctx.events().write("allreduce", value=value.item(), pid=os.getpid())
    ctx.log(f"all_reduce sum = {value.item()}")


def hang(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    """Rank `hang_rank` blocks forever outside any collective; the others wait in a barrier."""
    ctx.events().write("started", pid=os.getpid())
    if ctx.rank == int(spec.get("hang_rank", 1)):
        ctx.log("hanging on purpose", all_ranks=True)
        threading.Event().wait()
    dist.barrier()


def crash(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    """Rank `crash_rank` raises after the first collective; its peers then fail on the next."""
    dist.barrier()
    if ctx.rank == int(spec.get("crash_rank", 1)):
        raise RuntimeError(f"deliberate failure on rank {ctx.rank}")
    dist.all_reduce(torch.ones(1, device=ctx.device))
