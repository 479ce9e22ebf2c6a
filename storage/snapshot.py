"""Light read path for first paint: stdlib sqlite3 only (no sqlmodel, ~0.5 s to import).

Reads what the home screen and the first review card need: the schedule of every card that
has state, and how many new cards were introduced since a given time. Never writes, never
creates the file; returns None when the file has another schema version (the caller then takes
the slow path, whose open_database() migrates it or refuses a newer one) or cannot be read. With
strict=True (a review session, after open_database) a file it cannot read raises
storage.errors.DatabaseError instead, saying why.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from storage.errors import DatabaseError, one_line
from storage.migrations import LATEST_VERSION
from storage.schema_names import CARD_STATE


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    card_id: str
    deck_id: str
    state: int | None  # None: never reviewed (row exists only for a flag)
    due: datetime | None  # aware UTC
    suspended: bool
    buried_until: datetime | None
    content_hash: str | None
    introduced_at: datetime | None
    leech: bool = False  # lapsed leech_threshold times (column card_state.leech)


@dataclass(frozen=True)
class Snapshot:
    schedules: dict[str, ScheduleRow]

    def introduced_since(self, since: datetime) -> int:
        return sum(
            1 for r in self.schedules.values() if r.introduced_at and r.introduced_at >= since
        )


def _time(text: str | None) -> datetime | None:
    # stored as UTC without an offset (SQLModel's UTCDateTime on SQLite)
    return datetime.fromisoformat(text + "+00:00") if text else None


EMPTY = Snapshot(schedules={})


def read_snapshot(db_path: Path, *, strict: bool = False) -> Snapshot | None:
    """The current schedules; EMPTY when there is no database yet, None if it needs migrating
    (or is newer than this drill). A file it cannot read: None, or DatabaseError if `strict`."""
    try:
        return _read(db_path)
    except DatabaseError:
        if strict:
            raise
        return None


def _read(db_path: Path) -> Snapshot | None:
    if not db_path.exists():
        return EMPTY
    try:
        conn = sqlite3.connect(db_path.resolve().as_uri() + "?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as error:
        raise _unreadable(db_path, error) from None
    try:
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) != LATEST_VERSION:
            return None
        rows = conn.execute(
            "SELECT card_id, deck_id, state, due, suspended, buried_until, content_hash, "
            f"introduced_at, leech FROM {CARD_STATE}"
        ).fetchall()
        schedules = {row[0]: _schedule_row(row) for row in rows}
    except (sqlite3.Error, ValueError, TypeError) as error:  # damaged file, garbage in a column
        raise _unreadable(db_path, error) from None
    finally:
        conn.close()
    return Snapshot(schedules=schedules)


def _schedule_row(row: tuple) -> ScheduleRow:  # type: ignore[type-arg]
    if not isinstance(row[0], str) or not isinstance(row[1], str):
        raise TypeError(f"card_state row with a non-text id: {row[0]!r}")
    return ScheduleRow(
        card_id=row[0],
        deck_id=row[1],
        state=row[2],
        due=_time(row[3]),
        suspended=bool(row[4]),
        buried_until=_time(row[5]),
        content_hash=row[6],
        introduced_at=_time(row[7]),
        leech=bool(row[8]),
    )


def _unreadable(db_path: Path, error: BaseException) -> DatabaseError:
    return DatabaseError(
        f"cannot read the database {db_path}: {one_line(error)} (see: drill db check)"
    )
