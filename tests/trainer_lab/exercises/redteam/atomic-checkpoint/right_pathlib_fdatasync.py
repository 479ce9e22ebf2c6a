# RIGHT. Write to a hidden temp file in the SAME directory (so the rename is atomic), torch.save
# into the open file object, flush + os.fdatasync on that file's fd, then os.replace onto
# step-N.pt (the commit), then fsync an O_RDONLY fd of the directory so the rename is durable.
# All fds are closed by context managers / finally. latest() only considers names that fully
# match step-<int>.pt (temp files start with "." and end in ".tmp"), picks the max by integer,
# and returns None for a missing dir, an empty one, or only leftovers.
# Modern style: pathlib, os.fdatasync, contextlib.closing-like try/finally, walrus.
import contextlib
import os
import re
from pathlib import Path

import torch

_NAME = re.compile(r"step-(\d+)\.pt")


@contextlib.contextmanager
def _dir_fd(path: Path):
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield fd
    finally:
        os.close(fd)


def save(state: dict, ckpt_dir: str, step: int) -> None:
    d = Path(ckpt_dir)
    d.mkdir(parents=True, exist_ok=True)
    final = d / f"step-{step}.pt"
    tmp = d / f".step-{step}.pt.{os.getpid()}.tmp"
    with tmp.open("wb") as f:
        torch.save(state, f)
        f.flush()
        os.fdatasync(f.fileno())
    os.replace(tmp, final)
    with _dir_fd(d) as fd:
        os.fsync(fd)


def latest(ckpt_dir: str) -> dict | None:
    d = Path(ckpt_dir)
    if not d.is_dir():
        return None
    steps = [int(m.group(1)) for p in d.iterdir() if (m := _NAME.fullmatch(p.name))]
    if not steps:
        return None
    return torch.load(d / f"step-{max(steps)}.pt", weights_only=False)
