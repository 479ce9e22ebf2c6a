"""Write under a temporary name, fsync, then os.replace into the final name: the rename is the
commit. latest only considers committed names, so a torn temporary file is never read, and a
stale one left by a crash is simply overwritten by the next save."""

import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)\.pt")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    tmp = final + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    dir_fd = os.open(ckpt_dir, os.O_RDONLY)  # make the rename itself durable
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"))
