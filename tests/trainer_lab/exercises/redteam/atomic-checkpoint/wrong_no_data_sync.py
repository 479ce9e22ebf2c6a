# WRONG (class: commit made durable but the data it points to is not). Temp file + os.replace +
# directory fsync, but the temp file's data is never fsync'd (only flush()ed to the page cache).
# After a power cut the rename can be on disk while the file's blocks are not: a zero-length or
# torn step-N.pt under the committed name. A good checker must FAIL ("data synced before commit").
# Modern style: tempfile.NamedTemporaryFile(dir=..., delete=False).
import os
import re
import tempfile

import torch


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=ckpt_dir, prefix=".tmp-", delete=False) as f:
        torch.save(state, f)
        f.flush()
    os.replace(f.name, os.path.join(ckpt_dir, f"step-{step}.pt"))
    fd = os.open(ckpt_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(m.group(1)) for n in os.listdir(ckpt_dir) if (m := re.fullmatch(r"step-(\d+)\.pt", n))]
    return torch.load(os.path.join(ckpt_dir, f"step-{max(steps)}.pt"), weights_only=False) if steps else None
