"""Launcher self-test task for live output (imports torch): rank 0 prints a line, then waits
until the file `spec["release"]` exists before it prints the next, so a test can see the first
line while the launch is still running (trainer_lab.rank_output)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext


def log_then_wait(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    release = Path(spec["release"])
    ctx.log("before the release")
    deadline = time.monotonic() + float(spec.get("wait_s", 60))
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # the worker waits on the test's file; the test waits on this line
    dist.barrier()
    ctx.log("after the release")
