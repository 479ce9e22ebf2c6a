"""Wrong: a durable atomic commit, but the directory's descriptor opened for its fsync is never
closed: one file descriptor leaks per save, and a long run hits 'Too many open files'."""

import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)\.pt")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    with open(final + ".tmp", "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(final + ".tmp", final)
    os.fsync(os.open(ckpt_dir, os.O_RDONLY))


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt")) if steps else None
