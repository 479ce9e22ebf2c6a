# RIGHT. Commit by marker file: data goes to step-N.pt (fsync'd), then an empty step-N.done is
# created and the directory fsync'd -- the marker's creation is the durable commit. latest()
# only trusts steps that have a marker, newest by integer. A re-save of a step that already has
# a marker first retracts the marker (unlink + dir fsync) so a kill mid-rewrite cannot expose a
# torn file under a valid marker. Every fd is closed in finally / with blocks.
# Modern style: os.open with flags, dataclass-free helpers, os.scandir.
import os
import re

import torch


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    data = os.path.join(ckpt_dir, f"step-{step}.pt")
    marker = os.path.join(ckpt_dir, f"step-{step}.done")
    if os.path.exists(marker):
        os.unlink(marker)
        _fsync_dir(ckpt_dir)
    with open(data, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(ckpt_dir)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    with os.scandir(ckpt_dir) as it:
        steps = [int(m.group(1)) for e in it if (m := re.fullmatch(r"step-(\d+)\.done", e.name))]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"), weights_only=False)
