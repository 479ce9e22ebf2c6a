"""Wrong: every checkpoint file is committed atomically, but latest() follows a LATEST pointer
file that save() rewrites in place (open "w" truncates it first): a crash between the truncate
and the write leaves an empty pointer."""

import os

import torch


def _atomic_write(path: str, write) -> None:
    with open(path + ".tmp", "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    name = f"step-{step}.pt"
    _atomic_write(os.path.join(ckpt_dir, name), lambda f: torch.save(state, f))
    with open(os.path.join(ckpt_dir, "LATEST"), "w") as f:
        f.write(name)


def latest(ckpt_dir: str) -> dict | None:
    pointer = os.path.join(ckpt_dir, "LATEST")
    if not os.path.exists(pointer):
        return None
    with open(pointer) as f:
        name = f.read().strip()
    return torch.load(os.path.join(ckpt_dir, name))
