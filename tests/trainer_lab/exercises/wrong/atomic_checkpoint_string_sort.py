"""Wrong: atomic commit through a temporary name and os.replace, but latest() takes the last
name in sorted order: 'step-10.pt' sorts before 'step-9.pt'."""

import os

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    with open(final + ".tmp", "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(final + ".tmp", final)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    names = sorted(n for n in os.listdir(ckpt_dir) if n.startswith("step-") and n.endswith(".pt"))
    return torch.load(os.path.join(ckpt_dir, names[-1])) if names else None
