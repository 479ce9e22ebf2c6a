"""Wrong: temporary name, os.fsync, os.replace and a directory fsync, but the bytes go through a
16 MiB write buffer and there is no f.flush() before the fsync: the checkpoint is still in
Python's buffer when the fsync runs, so nothing makes it durable before the rename (the close
writes it out later). (torch.save into the file object itself would flush it on exit.)"""

import io
import os
import re

import torch

COMMITTED = re.compile(r"step-(\d+)\.pt")


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    final = os.path.join(ckpt_dir, f"step-{step}.pt")
    tmp = final + ".tmp"
    payload = io.BytesIO()
    torch.save(state, payload)
    with open(tmp, "wb", buffering=16 << 20) as f:
        f.write(payload.getvalue())
        os.fsync(f.fileno())
    os.replace(tmp, final)
    dir_fd = os.open(ckpt_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := COMMITTED.fullmatch(name))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt")) if steps else None
