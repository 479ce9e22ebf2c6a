"""The one error type storage raises for a database it cannot open, read, migrate, back up or
restore. Stdlib only, so the light read path (storage.snapshot) and storage.backup can raise it
without importing sqlmodel. str() is one line the user can act on."""

from __future__ import annotations


class DatabaseError(RuntimeError):
    """The database file cannot be opened, read or migrated (message is user-readable)."""


def one_line(error: BaseException | str, limit: int = 200) -> str:
    """An error's text on one line, cut to `limit` characters (SQLAlchemy appends SQL and URLs)."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MissingRow(LookupError):
    """The row a write names is not there (e.g. a run id no longer in the run log)."""
