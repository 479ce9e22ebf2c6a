"""Wrong: an empty marker file commits the checkpoint (written in place and fsynced first), but the
directory is never fsynced after the marker is created: until it is, the marker's directory entry
(the commit) can be lost in a power cut, as an unsynced rename can."""

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


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := DONE.fullmatch(name))]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"))
