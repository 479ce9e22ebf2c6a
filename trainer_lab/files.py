"""Read a file that user code could have written (or replaced) without trusting what it is
(stdlib only; trainer_lab's one copy of drill.files' rule, which trainer_lab cannot import).

Every file trainer_lab reads back from a run folder (result.json, events, failure and error
files, the recorder's files, stack dumps, stdout logs) and the user's script go through here:

    data, capped = read_head(path, cap)        # at most cap bytes from the start (or an offset)
    data, cut = read_tail(path, cap)           # at most the last cap bytes
    data = read_regular(path, max_bytes)       # the whole file, refused when larger
    replace_file(path, data)                   # write: a new file renamed over whatever is there

The open never blocks (O_NONBLOCK: a FIFO is refused, not waited on), never leaks into a child
(O_CLOEXEC) and, by default, does not follow a symlink in the last component (O_NOFOLLOW: a link
planted in a run folder cannot point the reader at /dev/zero, a FIFO or a file elsewhere). What
was opened is checked with fstat on the descriptor itself (no race between check and read):
anything but a regular file is a `FileRefused`, which is an OSError, so a reader that treats an
unreadable file as absent keeps doing so. Reads are bounded: a huge (or sparse) file costs at
most the cap. A missing file is FileNotFoundError as usual.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

_CHUNK = 1 << 20


class FileRefused(OSError):
    """The path is not a regular file (within the bound), or cannot be read; str() says why."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "file refused"


def open_regular(path: Path, *, follow_symlinks: bool = False) -> int:
    """A read-only descriptor of the regular file at path (the caller closes it)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as error:
        if not follow_symlinks and os.path.islink(path):
            raise FileRefused(f"{path} is a symbolic link, not a regular file") from None
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as error:
        os.close(fd)
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"{path} is {_kind(mode)}, not a regular file")
    return fd


def read_head(
    path: Path, cap: int, offset: int = 0, *, follow_symlinks: bool = False
) -> tuple[bytes, bool]:
    """(at most cap bytes of the file from offset, whether more followed them)."""
    fd = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        return _read_at(fd, path, cap, offset)
    finally:
        os.close(fd)


def read_tail(path: Path, cap: int, *, follow_symlinks: bool = False) -> tuple[bytes, bool]:
    """(at most the last cap bytes of the file, whether bytes before them were left out): where
    a log's end is what matters (a root cause, the last lines)."""
    fd = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        start = max(os.fstat(fd).st_size - cap, 0)
        data, _ = _read_at(fd, path, cap, start)
    except OSError as error:
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        os.close(fd)
    return data, start > 0


def _read_at(fd: int, path: Path, cap: int, offset: int) -> tuple[bytes, bool]:
    chunks, left, position = [], cap + 1, offset
    try:
        while left > 0:
            chunk = os.pread(fd, min(left, _CHUNK), position)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            position += len(chunk)
    except OSError as error:
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    data = b"".join(chunks)
    return data[:cap], len(data) > cap


def read_regular(path: Path, max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """The whole file; FileRefused when it holds more than max_bytes."""
    data, capped = read_head(path, max_bytes, follow_symlinks=follow_symlinks)
    if capped:
        raise FileRefused(f"{path} is larger than {_size(max_bytes)}")
    return data


def replace_file(path: Path, data: bytes) -> None:
    """Write path as a new file renamed into place: a reader sees the old file or the new one,
    and whatever was planted at that name (a FIFO, a symlink) is replaced, never opened."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _size(count: int) -> str:
    return f"{count // 1024**2} MiB" if count >= 1024**2 else f"{count} bytes"
