# RIGHT (heavy-handed). Temp file in the same directory, then os.sync() (on Linux sync() waits for
# completion and gives the guarantees of fsync on every file), os.replace as the commit, then
# os.sync() again so the rename is durable. No fd is opened by hand. Wasteful on a busy node, but
# correct. Modern style: pathlib + os.sync.
import os
import re
from pathlib import Path

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    d = Path(ckpt_dir)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f"tmp.step-{step}"
    torch.save(state, tmp)
    os.sync()
    os.replace(tmp, d / f"step-{step}.pt")
    os.sync()


def latest(ckpt_dir: str) -> dict | None:
    d = Path(ckpt_dir)
    if not d.is_dir():
        return None
    steps = [int(m.group(1)) for p in d.iterdir() if (m := re.fullmatch(r"step-(\d+)\.pt", p.name))]
    return torch.load(d / f"step-{max(steps)}.pt", weights_only=False) if steps else None
