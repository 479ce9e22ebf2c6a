"""Open/create/migrate the SQLite database and the small repository facade over it.

SQLite in WAL mode with a busy timeout, synchronous=FULL, and every write transaction started
with BEGIN IMMEDIATE: two running copies of drill queue for the write lock instead of failing
with "database is locked", and a committed rating survives a crash of the process.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlmodel import Session, col, create_engine, func, select

from storage.errors import DatabaseError, one_line
from storage.migrations import LATEST_VERSION, SchemaTooNewError, migrate, schema_version
from storage.tables import CardState, ReviewLog

__all__ = ["Database", "DatabaseError", "RecordedReview", "open_database"]

BUSY_TIMEOUT_MS = 10_000

StateDict = dict[str, Any]
_DATETIME_FIELDS = ("due", "last_review", "buried_until", "introduced_at")
_STATE_FIELDS = (
    "state", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses",
    "suspended", "buried_until", "content_hash", "introduced_at", "leech",
)  # fmt: skip


def unreadable(path: Path, error: BaseException) -> DatabaseError:
    """The one-line DatabaseError for a failed read or write of the database at `path`."""
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    detail = one_line(cause)
    if "database is locked" in detail or "database is busy" in detail:
        return DatabaseError(f"the database {path} is busy (another copy of drill?): {detail}")
    return DatabaseError(f"cannot read the database {path}: {detail} (see: drill db check)")


class _CallerError(Exception):
    """Carries an exception raised by caller code inside a guarded transaction, so that
    _guard translates only what the database raised."""

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


def state_of(row: CardState) -> StateDict:
    """The schedulable state of a card_state row, datetimes aware UTC."""
    state = {name: getattr(row, name) for name in _STATE_FIELDS}
    for name in _DATETIME_FIELDS:
        state[name] = from_db_time(state[name])
    return state


def state_to_json(state: StateDict | None) -> str | None:
    if state is None:
        return None
    return json.dumps(
        {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in state.items()},
        sort_keys=True,
    )


def state_from_json(text: str | None) -> StateDict | None:
    if text is None:
        return None
    state = json.loads(text)
    for name in _DATETIME_FIELDS:
        if state.get(name):
            state[name] = datetime.fromisoformat(state[name])
    return state


def _apply_state(row: CardState, state: StateDict) -> None:
    for name in _STATE_FIELDS:
        value = state.get(name, CardState.model_fields[name].default)
        if name in _DATETIME_FIELDS:
            value = to_db_time(value)
        setattr(row, name, value)


@dataclass(frozen=True)
class RecordedReview:
    log_id: int
    before: StateDict | None
    after: StateDict


def _prepare_file(path: Path) -> None:
    """Create the parent dir and run the core migrations with plain sqlite3."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as error:
        raise DatabaseError(f"cannot open database {path}: {one_line(error)}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if schema_version(conn) > LATEST_VERSION:  # refuse before changing a byte of it
            raise SchemaTooNewError(schema_version(conn))
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
    except DatabaseError as error:  # SchemaTooNewError
        raise DatabaseError(f"{path}: {error}") from None
    except sqlite3.Error as error:
        raise DatabaseError(
            f"cannot open database {path}: {one_line(error)} (see: drill db check)"
        ) from None
    finally:
        conn.close()


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
    """Repository facade. Each method is one short transaction, committed before it returns.

    Whatever the database itself raises (a damaged file, garbage in a column, a lock held past
    the busy timeout) comes out as DatabaseError with a one-line message.
    """

    def __init__(self, path: Path, engine: Engine) -> None:
        self.path = path
        self.engine = engine

    @contextlib.contextmanager
    def _guard(self, *, values: bool = True) -> Iterator[None]:
        """Translate database errors. With `values` (our own methods, whose bodies run no caller
        code) also the ValueError/TypeError/KeyError that SQLAlchemy or our JSON decoding raise
        on garbage stored in a column; a _CallerError is unwrapped there."""
        kinds: tuple[type[BaseException], ...] = (DBAPIError, sqlite3.Error)  # from SQLite
        if values:
            kinds += (SQLAlchemyError, ValueError, TypeError, KeyError)
        try:
            yield
        except kinds as error:
            raise unreadable(self.path, error) from None
        except _CallerError as carried:
            if not values:
                raise
            raise carried.error from None

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success (for other modules' tables too).
        Database errors become DatabaseError; the caller's own exceptions pass unchanged."""
        with self._guard(values=False), Session(self.engine, expire_on_commit=False) as session:
            yield session
            session.commit()

    def close(self) -> None:
        self.engine.dispose()

    # --- reads -------------------------------------------------------------------------------
    def card_state(self, card_id: str) -> StateDict | None:
        with self._guard(), Session(self.engine) as session:
            row = session.get(CardState, card_id)
            return None if row is None else state_of(row)

    def reviews(self, card_id: str | None = None) -> list[ReviewLog]:
        with self._guard(), Session(self.engine, expire_on_commit=False) as session:
            query = select(ReviewLog).order_by(col(ReviewLog.id))
            if card_id is not None:
                query = query.where(ReviewLog.card_id == card_id)
            return list(session.exec(query))

    def review_count(self) -> int:
        with self._guard(), Session(self.engine) as session:
            return int(session.exec(select(func.count()).select_from(ReviewLog)).one())

    # --- writes ------------------------------------------------------------------------------
    def record_review(
        self,
        card_id: str,
        deck_id: str,
        rating: int,
        reviewed_at: datetime,
        duration_ms: int,
        content_hash: str | None,
        schedule: Callable[[StateDict | None], StateDict],
    ) -> RecordedReview:
        """Read the card's state, let `schedule(before) -> after` compute the new one, write the
        state and a log row, and commit; all in one IMMEDIATE transaction."""
        with self._guard(), self.session() as session:
            row = session.get(CardState, card_id)
            before = None if row is None else state_of(row)
            try:
                after = dict(schedule(before))
            except Exception as error:
                raise _CallerError(error) from error
            after["content_hash"] = content_hash
            if after.get("introduced_at") is None:
                after["introduced_at"] = reviewed_at
            if row is None:
                row = CardState(card_id=card_id, deck_id=deck_id)
            row.deck_id = deck_id
            _apply_state(row, after)
            session.add(row)
            log = ReviewLog(
                card_id=card_id,
                deck_id=deck_id,
                rating=rating,
                reviewed_at=to_db_time(reviewed_at),
                duration_ms=max(0, int(duration_ms)),
                state_before=state_to_json(before),
                state_after=state_to_json(after) or "{}",
                content_hash=content_hash,
            )
            session.add(log)
            session.flush()
            assert log.id is not None
            return RecordedReview(log.id, before, state_of(row))

    def undo_review(self, log_id: int) -> bool:
        """Delete a log row and restore the card's state from before it. Only the newest review
        of a card can be undone (else later reviews would be built on a state that vanished)."""
        with self._guard(), self.session() as session:
            log = session.get(ReviewLog, log_id)
            if log is None:
                return False
            newest = session.exec(
                select(func.max(ReviewLog.id)).where(ReviewLog.card_id == log.card_id)
            ).one()
            if newest != log_id:
                return False
            before = state_from_json(log.state_before)
            row = session.get(CardState, log.card_id)
            if before is None:
                if row is not None:
                    session.delete(row)
            else:
                if row is None:
                    row = CardState(card_id=log.card_id, deck_id=log.deck_id)
                _apply_state(row, before)
                session.add(row)
            session.delete(log)
            return True

    def _upsert_flags(self, card_id: str, deck_id: str, **values: Any) -> None:
        with self._guard(), self.session() as session:
            row = session.get(CardState, card_id) or CardState(card_id=card_id, deck_id=deck_id)
            for name, value in values.items():
                setattr(row, name, to_db_time(value) if isinstance(value, datetime) else value)
            session.add(row)

    def restore_flags(self, card_id: str, deck_id: str, before: StateDict | None) -> None:
        """Undo a bury or suspend: put back the flags of `before` (the card's state read just
        before it); a row that only existed for the flag is removed again."""
        with self._guard(), self.session() as session:
            row = session.get(CardState, card_id)
            if row is None:
                return
            if before is None and row.state is None and not row.leech:
                session.delete(row)
                return
            before = before or {}
            row.suspended = bool(before.get("suspended") or False)
            row.buried_until = to_db_time(before.get("buried_until"))
            session.add(row)

    def set_suspended(self, card_id: str, deck_id: str, suspended: bool = True) -> None:
        self._upsert_flags(card_id, deck_id, suspended=suspended)

    def set_buried(self, card_id: str, deck_id: str, until: datetime | None) -> None:
        self._upsert_flags(card_id, deck_id, buried_until=until)


def open_database(path: Path) -> Database:
    """Create or migrate the database at `path` (drill.paths.database_path() in the app): every
    table comes from storage.migrations. Raises DatabaseError when the file cannot be used.
    (Automatic backups are the caller's: storage.backup.auto_backup at the app's start.)"""
    _prepare_file(path)
    return Database(path, _make_engine(path))
