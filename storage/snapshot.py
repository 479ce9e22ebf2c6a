"""Light read path for first paint: stdlib sqlite3 only (no sqlmodel, ~0.5 s to import).

Reads what the home screen and the first review card need: the schedule of every card that
has state, and how many new cards were introduced since a given time. Never writes, never
creates the file; returns None when the file has an older schema (the caller then takes the
slow path, whose open_database() migrates it).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

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


def read_snapshot(db_path: Path) -> Snapshot | None:
    """The current schedules; EMPTY when there is no database yet, None if it needs migrating."""
    if not db_path.exists():
        return EMPTY
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return None
    try:
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) != LATEST_VERSION:
            return None
        rows = conn.execute(
            "SELECT card_id, deck_id, state, due, suspended, buried_until, content_hash, "
            f"introduced_at FROM {CARD_STATE}"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    schedules = {
        row[0]: ScheduleRow(
            card_id=row[0],
            deck_id=row[1],
            state=row[2],
            due=_time(row[3]),
            suspended=bool(row[4]),
            buried_until=_time(row[5]),
            content_hash=row[6],
            introduced_at=_time(row[7]),
        )
        for row in rows
    }
    return Snapshot(schedules=schedules)
