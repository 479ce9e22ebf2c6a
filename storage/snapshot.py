"""Light read path for first paint: stdlib sqlite3 only (no sqlmodel, ~0.5 s to import).

Reads what the home screen and the first review card need: the schedule of every card that
has state, and how many new cards were introduced since a given time. Never writes, never
creates the file; returns None when the file has another schema version (the caller then takes
the slow path, whose open_database() migrates it or refuses a newer one) or cannot be read. With
strict=True (a review session, after open_database) a file it cannot read raises
storage.errors.DatabaseError instead, saying why.

A row holding values drill never writes (storage.domains) does not stop the read: it comes back
marked `damaged` and suspended, so no queue shows that card and the scheduler never sees the
values; `Snapshot.notice` says how many were skipped (see: drill db check).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from storage.domains import card_state_problems, optional_time, shown
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
    damaged: str | None = None  # what is wrong with the stored row; then skipped (suspended)


@dataclass(frozen=True)
class Snapshot:
    schedules: dict[str, ScheduleRow]

    @property
    def damaged(self) -> list[str]:
        """Ids of the cards skipped because their stored row holds values drill never writes."""
        return damaged_ids(self.schedules)

    @property
    def notice(self) -> str | None:
        """One line for the user when cards were skipped, else None."""
        return damaged_notice(self.schedules)

    def introduced_since(self, since: datetime, until: datetime | None = None) -> int:
        """Cards first reviewed at `since` or later (and at `until` or earlier: a review dated
        after now, from a clock that was once set wrong, is not one of today's)."""
        return sum(
            1
            for r in self.schedules.values()
            if r.introduced_at
            and r.introduced_at >= since
            and (until is None or r.introduced_at <= until)
        )


EMPTY = Snapshot(schedules={})


def damaged_ids(schedules: Mapping[str, ScheduleRow]) -> list[str]:
    """Ids of the cards skipped because their stored row holds values drill never writes."""
    return sorted(card_id for card_id, row in schedules.items() if row.damaged)


def damaged_notice(schedules: Mapping[str, ScheduleRow]) -> str | None:
    """One line for the user when cards were skipped (damaged rows), else None. The ids are
    as stored: a screen shows the line as text (drill.tui.plain), never as markup."""
    damaged = damaged_ids(schedules)
    if not damaged:
        return None
    first = ", ".join(damaged[:3]) + (", ..." if len(damaged) > 3 else "")
    return (
        f"{len(damaged)} card(s) skipped: their stored schedule holds values drill never "
        f"writes ({first}; see: drill db check)"
    )


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
        rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM {CARD_STATE}").fetchall()
        schedules = {row.card_id: row for row in map(_schedule_row, rows)}
    except (sqlite3.Error, ValueError, TypeError) as error:  # damaged file, garbage in a column
        raise _unreadable(db_path, error) from None
    finally:
        conn.close()
    return Snapshot(schedules=schedules)


_COLUMNS = ("card_id", "deck_id", "state", "step", "stability", "difficulty", "due",
            "last_review", "reps", "lapses", "suspended", "buried_until", "content_hash",
            "introduced_at", "leech")  # fmt: skip


def _schedule_row(values: tuple) -> ScheduleRow:  # type: ignore[type-arg]
    row = dict(zip(_COLUMNS, values, strict=True))
    problems = card_state_problems(row)
    if problems:
        card_id = row["card_id"]
        return ScheduleRow(  # a blob id is keyed by its repr: it names no deck's card
            card_id=card_id if isinstance(card_id, str) else shown(card_id),
            deck_id=row["deck_id"] if isinstance(row["deck_id"], str) else "",
            state=None,
            due=None,
            suspended=True,
            buried_until=None,
            content_hash=None,
            introduced_at=None,
            damaged="; ".join(problems),
        )
    return ScheduleRow(
        card_id=row["card_id"],
        deck_id=row["deck_id"],
        state=row["state"],
        due=optional_time(row["due"], "due"),
        suspended=bool(row["suspended"]),
        buried_until=optional_time(row["buried_until"], "buried_until"),
        content_hash=row["content_hash"] if isinstance(row["content_hash"], str) else None,
        introduced_at=optional_time(row["introduced_at"], "introduced_at"),
        leech=bool(row["leech"]),
    )


def _unreadable(db_path: Path, error: BaseException) -> DatabaseError:
    return DatabaseError(
        f"cannot read the database {db_path}: {one_line(error)} (see: drill db check)"
    )
