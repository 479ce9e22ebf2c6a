# WRONG (class: newest chosen by string order). save() is fully correct (temp, fsync, replace, dir
# fsync), but latest() takes max() of the FILE NAMES: "step-9.pt" > "step-10.pt", so once step
# numbers gain a digit it resumes from an old checkpoint. A good checker must FAIL when steps
# cross a power of ten (e.g. 5, 10).
# Modern style: pathlib.glob + max over names.
import os
from pathlib import Path

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    d = Path(ckpt_dir)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".step-{step}.tmp"
    with tmp.open("wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, d / f"step-{step}.pt")
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def latest(ckpt_dir: str) -> dict | None:
    d = Path(ckpt_dir)
    names = [p.name for p in d.glob("step-*.pt")] if d.is_dir() else []
    return torch.load(d / max(names), weights_only=False) if names else None
