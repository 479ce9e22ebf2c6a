"""Right, another style: a class that binds its sync once at import (a staticmethod holding
os.fsync under another name, and the module-level `from os import replace as commit`), writes
through os.open/os.write, and fsyncs the directory after the rename."""

import io
import os
from os import replace as commit

import torch


class Store:
    flush_to_disk = staticmethod(os.fsync)

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def write(self, name: str, data: bytes) -> None:
        tmp = os.path.join(self.folder, f".{name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            self.flush_to_disk(fd)
        finally:
            os.close(fd)
        commit(tmp, os.path.join(self.folder, name))
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            self.flush_to_disk(dir_fd)
        finally:
            os.close(dir_fd)


def save(state: dict, ckpt_dir: str, step: int) -> None:
    os.makedirs(ckpt_dir, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    Store(ckpt_dir).write(f"ckpt_{step}", buffer.getvalue())


def latest(ckpt_dir: str) -> dict | None:
    if not os.path.isdir(ckpt_dir):
        return None
    steps = [int(n[5:]) for n in os.listdir(ckpt_dir) if n.startswith("ckpt_") and n[5:].isdigit()]
    if not steps:
        return None
    return torch.load(os.path.join(ckpt_dir, f"ckpt_{max(steps)}"))
