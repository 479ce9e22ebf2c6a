"""Right, another style: no rename. The checkpoint is written in place and fsynced, then an empty
marker file commits it, and the directory is fsynced so that the marker's creation is durable;
latest() only trusts steps whose marker exists, compared as numbers. A torn step-N.pt has no
marker, and the next save of step N simply overwrites it."""

import os
import re

import torch

DONE = re.compile(r"step-(\d+)\.done")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    marker = os.path.join(ckpt_dir, f"step-{step}.done")
    if os.path.exists(marker):
        os.remove(marker)
    with open(os.path.join(ckpt_dir, f"step-{step}.pt"), "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    with open(marker, "wb") as f:
        os.fsync(f.fileno())
    dir_fd = os.open(ckpt_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := DONE.fullmatch(name))]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"))
