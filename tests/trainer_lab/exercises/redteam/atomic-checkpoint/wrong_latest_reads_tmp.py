# WRONG (class: latest() can pick a half-written file). save() is correct (temp "step-N.pt.tmp",
# fsync, replace, dir fsync) but latest() globs "step-*" and parses the number out of the name,
# so a killed save's leftover "step-12.pt.tmp" counts as step 12 -- newer than the last complete
# one -- and torch.load reads a torn file (or, with only leftovers, does not return None).
# A good checker must FAIL (kill mid-save, then latest()).
# Modern style: pathlib.glob + str.partition parsing.
import os
from pathlib import Path

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    d = Path(ckpt_dir)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f"step-{step}.pt.tmp"
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
    if not d.is_dir():
        return None
    found = {int(p.name.partition("-")[2].partition(".")[0]): p for p in d.glob("step-*")}
    return torch.load(found[max(found)], weights_only=False) if found else None
