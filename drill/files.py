"""Reading a file drill keeps (or is handed) without trusting what it is. UI-free, stdlib only.

`read_regular(path, max_bytes)` opens without blocking (a FIFO is refused, not waited on),
follows a symlink only to what it names and checks that with fstat on the open descriptor (no
race between the check and the read): a regular file of at most max_bytes, read once, never
more than max_bytes + 1 bytes (a file that grew in between is refused too). Anything else is a
`FileRefused` with the reason in one line; a missing file is FileNotFoundError as usual.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class FileRefused(ValueError):
    """The path is not a regular file within the size bound, or cannot be read."""


def read_regular(path: Path, max_bytes: int) -> bytes:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise FileRefused(f"{path} is larger than {_size(max_bytes)}")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as error:
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FileRefused(f"{path} is larger than {_size(max_bytes)}")
    return data


def _size(count: int) -> str:
    return f"{count // 1024**2} MiB" if count >= 1024**2 else f"{count} bytes"
