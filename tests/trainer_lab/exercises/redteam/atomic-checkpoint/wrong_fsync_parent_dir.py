# WRONG (class: sync on the wrong fd -- fsyncs the PARENT of ckpt_dir). Data fsync'd, atomic
# os.replace, then the "directory fsync" opens os.path.dirname(ckpt_dir) (a path-manipulation slip:
# treating ckpt_dir like a file path), which does not make the rename inside ckpt_dir durable.
# A good checker must FAIL the "fsync its directory" requirement.
# Modern style: os.path + context-managed fdopen.
import os
import re

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    tmp = final + ".partial"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    parent = os.path.dirname(os.path.abspath(ckpt_dir))
    fd = os.open(parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for n in os.listdir(ckpt_dir) if (m := re.fullmatch(r"step-(\d+)\.pt", n))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"), weights_only=False) if steps else None
