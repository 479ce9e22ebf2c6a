"""The one error type storage raises for a database it cannot open, read, migrate, back up or
restore. Stdlib only, so the light read path (storage.snapshot) and storage.backup can raise it
without importing sqlmodel. str() is one line the user can act on."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

LOW_SPACE_BYTES = 64 * 1024  # below this much free space a failed write is blamed on the disk
# SQLite's names for a failure to write (as opposed to a file it cannot read or parse)
_WRITE_FAILURES = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC",
                   "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_SHMMAP",
                   "SQLITE_IOERR_DIR_FSYNC", "SQLITE_IOERR_SHMOPEN")  # fmt: skip


class DatabaseError(RuntimeError):
    """The database file cannot be opened, read or migrated (message is user-readable)."""


def one_line(error: BaseException | str, limit: int = 200) -> str:
    """An error's text on one line, cut to `limit` characters (SQLAlchemy appends SQL and URLs)."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MissingRow(LookupError):
    """The row a write names is not there (e.g. a run id no longer in the run log)."""


class DamagedRow(DatabaseError):
    """A row holds values drill never writes (storage.domains); the message names the row."""


def is_write_failure(error: BaseException, path: Path | None = None) -> bool:
    """Whether SQLite failed to write (full disk, read-only file or directory, an I/O error
    while writing), as opposed to a file it cannot read. With `path`, a generic I/O or open
    error counts too when the file system holding `path` is full or read-only (space_note):
    SQLite reports a full tmpfs as "disk I/O error" when its shared-memory file cannot grow."""
    if not isinstance(error, sqlite3.Error):
        return False
    name = getattr(error, "sqlite_errorname", None) or ""
    if name.startswith(_WRITE_FAILURES):
        return True
    generic = name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN"))
    return generic and path is not None and bool(space_note(path))


def space_note(path: Path) -> str:
    """Why writing next to `path` may have failed, when the file system says so: "; the disk
    holding DIR is full (N KiB free)" or "; DIR is on a read-only file system"; else "". The
    real cause behind SQLite's "disk I/O error" or "unable to open database file"."""
    folder = path if path.is_dir() else path.parent
    try:
        info = os.statvfs(folder)
    except OSError:
        return ""
    if info.f_flag & os.ST_RDONLY:
        return f"; {folder} is on a read-only file system"
    free = info.f_bavail * info.f_frsize
    if free < LOW_SPACE_BYTES:
        return f"; the disk holding {folder} is full ({free // 1024} KiB free)"
    return ""


def os_reason(error: OSError) -> str:
    """An OSError's cause without the errno and the path ("Read-only file system")."""
    return error.strerror or one_line(error)
