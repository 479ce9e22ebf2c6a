"""Checkpoints for a job that can be killed at any moment. save(state, ckpt_dir, step) is called
every few steps; after a crash the job restarts and resumes from latest(ckpt_dir), which returns
the newest checkpoint's state, or None when there is none. A kill in the middle of save must not
cost more than the checkpoint being written. Run `drill exercise check atomic-checkpoint`."""

import os
import re

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    torch.save(state, os.path.join(ckpt_dir, f"step-{step}.pt"))  # TODO: and if we die here?


def latest(ckpt_dir: str) -> dict | None:
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir)
             if (m := re.fullmatch(r"step-(\d+)\.pt", name))]  # fmt: skip
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"))
