"""Where an export goes: checked up front (one-line DrillError), written to a temporary file
next to it and renamed into place, so a failed export never leaves half a file behind."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from drill.errors import DrillError


def write_atomically(out: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(temporary)` and move the result to `out`. DrillError when `out` is a
    directory, its directory is missing, or writing fails (the message names `out`)."""
    out = out.expanduser()
    if out.is_dir():
        raise DrillError(f"cannot write {out}: it is a directory (give a file name)")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise DrillError(f"cannot write {out}: no directory {parent}")
    temporary = parent / f".{out.name}.{os.getpid()}.tmp"
    try:
        write(temporary)
        os.replace(temporary, out)
    except OSError as error:
        reason = error.strerror or str(error)
        raise DrillError(f"cannot write {out}: {reason}") from None
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return out
