"""Wrong: stages each checkpoint in its own directory and renames the directory (atomic, and the
reader skips staging dirs), but creates the staging dir with os.makedirs without exist_ok, so
the one a killed save left behind makes every later save of that step fail."""

import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    staging = os.path.join(ckpt_dir, f"step-{step}.staging")
    os.makedirs(staging)
    torch.save(state, os.path.join(staging, "state.pt"))
    os.replace(staging, os.path.join(ckpt_dir, f"step-{step}"))


def latest(ckpt_dir: str) -> dict | None:
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}", "state.pt"))
