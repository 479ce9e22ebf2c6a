"""Wrong: writes the whole checkpoint under a temporary name and fsyncs it, but then commits by
copying it over the final name (shutil.copyfile is not atomic: a crash mid-copy leaves a torn
step-N.pt that latest() reads)."""

import os
import re
import shutil

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
    shutil.copyfile(tmp, final)
    os.remove(tmp)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt")) if steps else None
