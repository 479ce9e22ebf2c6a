"""Right, another style: a context manager that flushes and os.fdatasync's the file on exit (the
data is what must be durable; fdatasync skips only metadata a read does not need), pathlib's
replace for the commit, and os.fdatasync on the directory afterwards."""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import torch


@contextlib.contextmanager
def durable(path: Path) -> Iterator[BinaryIO]:
    with path.open("wb") as f:
        yield f
        f.flush()
        os.fdatasync(f.fileno())


def save(state: dict, ckpt_dir: str, step: int) -> None:
    folder = Path(ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / f"step-{step:08d}.partial"
    with durable(staging) as f:
        torch.save(state, f)
    staging.replace(folder / f"step-{step:08d}.ckpt")
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def latest(ckpt_dir: str) -> dict | None:
    folder = Path(ckpt_dir)
    if not folder.is_dir():
        return None
    done = sorted(folder.glob("step-*.ckpt"), key=lambda p: int(p.stem.split("-")[1]))
    return torch.load(done[-1]) if done else None
