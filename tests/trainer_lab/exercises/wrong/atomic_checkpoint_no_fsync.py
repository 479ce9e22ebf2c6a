"""Wrong: atomic against a kill (temporary name, then os.replace), but nothing is fsynced: after
a power cut the rename can be on disk before the data, and step-N.pt is empty."""

import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)\.pt")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    torch.save(state, final + ".tmp")
    os.replace(final + ".tmp", final)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt")) if steps else None
