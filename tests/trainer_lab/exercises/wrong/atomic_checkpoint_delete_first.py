"""Wrong: keeps one checkpoint by deleting the old one before writing the new one (temp file and
rename are right, but a crash in between leaves nothing)."""

import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)\.pt")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    for name in os.listdir(ckpt_dir):
        os.remove(os.path.join(ckpt_dir, name))
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    with open(final + ".tmp", "wb") as f:
        torch.save(state, f)
    os.replace(final + ".tmp", final)


def latest(ckpt_dir: str) -> dict | None:
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt")) if steps else None
