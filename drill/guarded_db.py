"""Database calls made for a UI, with storage failures turned into a result instead of an error.

A locked database (another copy of drill past the busy timeout), a corrupted file or a schema
problem must never end the app: the screen shows the one-line `notice` of the returned `Done`
and the user keeps working. Screens call `write()` / `read()` and never see SQLite or
SQLAlchemy exceptions, so they never import either.

Nothing heavy is imported here: an exception can only be an SQLAlchemy or storage error when
that module is loaded already, so the check looks in sys.modules (first paint stays light).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from drill.errors import DrillError

T = TypeVar("T")

NOT_SAVED = "Not saved: {detail}. Try again."
NOT_READ = "Could not read the database: {detail}."


@dataclass(frozen=True)
class Done(Generic[T]):
    """What a guarded call returned, or the notice that says why it could not run."""

    value: T | None = None
    notice: str | None = None
    error: BaseException | None = field(default=None, repr=False)  # what the notice explains

    @property
    def ok(self) -> bool:
        return self.notice is None


def is_storage_error(error: BaseException) -> bool:
    """sqlite3, SQLAlchemy, storage's DatabaseError or a DrillError (e.g. StorageError)."""
    if isinstance(error, sqlite3.Error | DrillError) or _readable(error):
        return True
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    return sqlalchemy_exc is not None and isinstance(error, sqlalchemy_exc.SQLAlchemyError)


def _readable(error: BaseException) -> bool:
    """Errors whose text is a user-readable sentence already (storage's DatabaseError says
    what failed, on which file, and what to run)."""
    if isinstance(error, DrillError):
        return True
    for module in ("storage.errors", "storage.db"):
        database_error = getattr(sys.modules.get(module), "DatabaseError", None)
        if database_error is not None and isinstance(error, database_error):
            return True
    return False


def error_detail(error: BaseException) -> str:
    """One line: SQLAlchemy wraps the driver's error in `.orig`, whose text is the useful one."""
    text = str(getattr(error, "orig", None) or error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def write(call: Callable[[], T]) -> Done[T]:
    """Run one committing call; a storage failure gives "Not saved: ... Try again."."""
    return _guarded(call, NOT_SAVED)


def read(call: Callable[[], T]) -> Done[T]:
    """Run one reading call; a storage failure gives its own sentence, or "Could not read
    the database: ..." for a bare driver error."""
    return _guarded(call, None)


def _guarded(call: Callable[[], T], template: str | None) -> Done[T]:
    try:
        return Done(call())
    except Exception as error:
        if not is_storage_error(error):
            raise
        detail = error_detail(error).rstrip(".")
        if template is None:
            template = "{detail}." if _readable(error) else NOT_READ
            detail = detail[:1].upper() + detail[1:] if _readable(error) else detail
        return Done(None, template.format(detail=detail), error)
