"""Open/create/migrate the SQLite database: the engine, the unit of work and one repository per
aggregate (`db.review`, `db.runs`, `db.exercises`, `db.mocks`, `db.plans`). Only storage opens
sessions.

SQLite in WAL mode with a busy timeout, synchronous=FULL, and every write transaction started
with BEGIN IMMEDIATE: two running copies of drill queue for the write lock instead of failing
with "database is locked", and a committed rating survives a crash of the process.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlmodel import Session, create_engine

from storage.errors import DatabaseError, is_write_failure, one_line, space_note
from storage.migrations import BUSY_TIMEOUT_MS, migrate_file
from storage.schema_names import StateDict

if TYPE_CHECKING:
    from storage.exercises import ExerciseRepository
    from storage.mocks import MockRepository
    from storage.plans import PlanRepository
    from storage.reviews import ReviewRepository
    from storage.runs import RunRepository

__all__ = ["Database", "DatabaseError", "StateDict", "open_database"]


def unreadable(path: Path, error: BaseException) -> DatabaseError:
    """The one-line DatabaseError for a failed read or write of the database at `path`: a
    write SQLite could not make (full disk, read-only) says "cannot write", naming the cause."""
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    detail = one_line(cause)
    if "database is locked" in detail or "database is busy" in detail:
        return DatabaseError(f"the database {path} is busy (another copy of drill?): {detail}")
    space = space_note(path)
    if is_write_failure(cause, path):
        return DatabaseError(f"cannot write the database {path}: {detail}{space}")
    return DatabaseError(f"cannot read the database {path}: {detail}{space} (see: drill db check)")


class CallerError(Exception):
    """Carries an exception raised by caller code inside a guarded transaction, so that
    Database.guard translates only what the database raised."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def to_db_time(value: datetime | None) -> datetime | None:
    """Aware UTC for SQLModel's UTCDateTime columns (stored on SQLite as UTC without offset);
    naive input is taken to be UTC already."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def from_db_time(value: datetime | None) -> datetime | None:
    return to_db_time(value)


def _make_engine(path: Path) -> Engine:
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # Let us issue BEGIN ourselves (pysqlite's implicit BEGIN is DEFERRED).
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        dbapi_connection.execute("PRAGMA journal_mode = WAL")
        dbapi_connection.execute("PRAGMA synchronous = FULL")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # IMMEDIATE: take the write lock up front, so a read-then-write transaction never
        # fails with SQLITE_BUSY when another copy committed in between.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


class Database:
    """The engine and the unit of work; the repositories hang off it.

    Whatever the database itself raises (a damaged file, garbage in a column, a lock held past
    the busy timeout) comes out of a repository as DatabaseError with a one-line message.
    """

    def __init__(self, path: Path, engine: Engine) -> None:
        self.path = path
        self.engine = engine

    @contextlib.contextmanager
    def guard(self, *, values: bool = True) -> Iterator[None]:
        """Translate database errors. With `values` (repository methods, whose bodies run no
        caller code) also the ValueError/TypeError/KeyError that SQLAlchemy or our JSON decoding
        raise on garbage stored in a column; a CallerError is unwrapped there."""
        kinds: tuple[type[BaseException], ...] = (DBAPIError, sqlite3.Error)  # from SQLite
        if values:
            kinds += (SQLAlchemyError, ValueError, TypeError, KeyError)
        try:
            yield
        except kinds as error:
            raise unreadable(self.path, error) from None
        except CallerError as carried:
            if not values:
                raise
            raise carried.error from None

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction, committed on success; for storage's repositories only. Database
        errors become DatabaseError; the caller's own exceptions pass unchanged."""
        with self.guard(values=False), Session(self.engine, expire_on_commit=False) as session:
            yield session
            session.commit()

    @contextlib.contextmanager
    def unit(self) -> Iterator[Session]:
        """session() whose garbage-in-a-column errors become DatabaseError too."""
        with self.guard(), self.session() as session:
            yield session

    def close(self) -> None:
        self.engine.dispose()

    # --- repositories, one per aggregate (each method one short transaction) ----------------
    @functools.cached_property
    def review(self) -> ReviewRepository:
        from storage.reviews import ReviewRepository

        return ReviewRepository(self)

    @functools.cached_property
    def runs(self) -> RunRepository:
        from storage.runs import RunRepository

        return RunRepository(self)

    @functools.cached_property
    def exercises(self) -> ExerciseRepository:
        from storage.exercises import ExerciseRepository

        return ExerciseRepository(self)

    @functools.cached_property
    def mocks(self) -> MockRepository:
        from storage.mocks import MockRepository

        return MockRepository(self)

    @functools.cached_property
    def plans(self) -> PlanRepository:
        from storage.plans import PlanRepository

        return PlanRepository(self)


def open_database(path: Path) -> Database:
    """Create or migrate the database at `path` (drill.paths.database_path() in the app): every
    table comes from storage.migrations. Raises DatabaseError when the file cannot be used.
    (Automatic backups are the caller's: storage.backup.auto_backup at the app's start.)"""
    migrate_file(path)
    return Database(path, _make_engine(path))
