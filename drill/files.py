"""Reading a file drill keeps (or is handed) without trusting what it is. UI-free, stdlib only.

`read_regular(path, max_bytes)` opens without blocking (a FIFO is refused, not waited on),
follows a symlink only to what it names and checks that with fstat on the open descriptor (no
race between the check and the read): a regular file of at most max_bytes, read once, never
more than max_bytes + 1 bytes (a file that grew in between is refused too). Anything else is a
`FileRefused` with the reason in one line; a missing file is FileNotFoundError as usual.

`decode_text(data, name)` is the one rule for a user's text file that is not UTF-8 (a Latin-1
exercise file): it is shown decoded as cp1252 (else Latin-1, which decodes any byte), line ends
and control characters made printable, with a one-line notice naming the first bad byte.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from drill.text import printable


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


@dataclass(frozen=True)
class Decoded:
    """A file's bytes as text; `notice` says how when they were not UTF-8 (else None)."""

    text: str
    notice: str | None = None


def decode_text(data: bytes, name: str) -> Decoded:
    """UTF-8 as it is; anything else decoded as cp1252 (else Latin-1), shown printable, with a
    notice: the text is then not the file's bytes, so whoever saves it writes UTF-8 only after
    the user changed it (drill.watched_file)."""
    try:
        return Decoded(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        at = error.start
    text, encoding = _decoded_8bit(data)
    notice = (
        f"{name} is not UTF-8 (byte 0x{data[at]:02x} at offset {at}): shown as {encoding}; "
        "it is saved, as UTF-8, only once you change it"
    )
    return Decoded(printable(text.replace("\r\n", "\n")), notice)


def _decoded_8bit(data: bytes) -> tuple[str, str]:
    """Latin-1 unless a byte in 0x80-0x9F (control characters there) decodes as cp1252."""
    if any(0x80 <= byte <= 0x9F for byte in data):
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1"), "Latin-1"  # every byte decodes


def require_parent_dir(out: Path, named: Path | None = None) -> None:
    """DrillError (one line, exit 2) when the directory that `out` would be written in is
    missing or not a directory: drill never creates the folders of a path it is given (an
    export, a backup, a notebook, a lab's run directory). `named` is the path as the user gave
    it, when `out` is where that leads (a symlink's target)."""
    from drill.errors import DrillError

    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise DrillError(f"cannot write {named or out}: no directory {parent}")
