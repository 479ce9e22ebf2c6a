"""Where an export goes: checked up front (one-line DrillError), written to a temporary file
next to it and renamed into place, so a failed export never leaves half a file behind.

An export writes a regular file or a new path, nothing else (issue 25):
- OUT a directory, a device, a FIFO or a socket (or a symlink to one of them, or a dangling
  symlink) is refused with one line; nothing is renamed over it.
- OUT a symlink to a regular file writes that file (the link stays a link, pointing at the new
  contents): the temporary file is made next to the link's target and renamed over the target.
- "-" means standard output for a format that can be streamed (CSV); a caller for a format that
  cannot (an Anki package is a zip) refuses it with `refuse_stdout`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from drill.errors import DrillError
from drill.files import require_parent_dir

STDOUT = "-"


def is_stdout(out: Path | str) -> bool:
    return str(out) == STDOUT


def refuse_stdout(out: Path | str, what: str) -> None:
    """DrillError when `out` is "-": `what` (e.g. "an Anki package") cannot be streamed."""
    if is_stdout(out):
        raise DrillError(f"{what} cannot be written to standard output (give a file name)")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory (give a file name)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_target(out: Path) -> Path:
    """The path the export will replace or create for `out`: `out` itself, or the regular file
    a symlink `out` points to. DrillError (one line naming `out`) for anything else, and when
    the directory to write in is missing."""
    out = out.expanduser()
    try:
        link = os.lstat(out)
    except FileNotFoundError:
        link = None
    except OSError as error:
        raise DrillError(f"cannot write {out}: {error.strerror or error}") from None
    target = out
    if link is not None and stat.S_ISLNK(link.st_mode):
        try:
            target = out.resolve(strict=True)
        except (OSError, RuntimeError):
            raise DrillError(f"cannot write {out}: a symlink to nothing") from None
        mode = os.stat(target).st_mode
        if not stat.S_ISREG(mode):
            raise DrillError(f"cannot write {out}: a symlink to {_kind(mode)}")
    elif link is not None and not stat.S_ISREG(link.st_mode):
        raise DrillError(f"cannot write {out}: it is {_kind(link.st_mode)}")
    require_parent_dir(target, named=out)
    return target


def _still_replaceable(target: Path) -> bool:
    """Just before the rename: `target` is missing or a regular file (not a symlink: a swap
    after check_target must not send the rename over a device or elsewhere)."""
    try:
        return stat.S_ISREG(os.lstat(target).st_mode)
    except FileNotFoundError:
        return True


def write_atomically(out: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(temporary)` and move the result to `out` (see the module docstring for
    symlinks). DrillError when `out` is not a regular file or a new path, its directory is
    missing, or writing fails (the message names `out`). Returns `out`."""
    out = out.expanduser()
    target = check_target(out)
    temporary = target.parent / f".{target.name}.{os.getpid()}.tmp"
    try:
        write(temporary)
        if not _still_replaceable(target):
            raise DrillError(f"cannot write {out}: it changed into something not a regular file")
        os.replace(temporary, target)
    except OSError as error:
        reason = error.strerror or str(error)
        raise DrillError(f"cannot write {out}: {reason}") from None
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return out
