"""The exercise-progress repository (table exercise_progress, storage/exercise_tables.py). The
checks themselves are runs in the run log (storage.runs, kind "exercise"). Each method is one
short transaction, committed before it returns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import select

from storage.db import from_db_time, to_db_time
from storage.exercise_tables import ExerciseProgress

if TYPE_CHECKING:
    from storage.db import Database


@dataclass(frozen=True)
class ProgressEntry:
    name: str
    attempts: int
    hints_shown: int
    solution_viewed: bool
    last_status: str | None
    solved_at: datetime | None
    rated: int | None


def _entry(row: ExerciseProgress) -> ProgressEntry:
    return ProgressEntry(
        row.name,
        int(row.attempts or 0),
        int(row.hints_shown or 0),
        bool(row.solution_viewed),
        row.last_status,
        from_db_time(row.solved_at),
        row.rated,
    )


class ExerciseRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def _row(session: Any, name: str, now: datetime) -> ExerciseProgress:
        row = session.get(ExerciseProgress, name)
        if row is None:
            row = ExerciseProgress(name=name, started_at=to_db_time(now))  # type: ignore[arg-type]
            session.add(row)
        return row

    def all(self) -> dict[str, ProgressEntry]:
        with self.db.unit() as session:
            return {r.name: _entry(r) for r in session.exec(select(ExerciseProgress)).all()}

    def get(self, name: str) -> ProgressEntry | None:
        with self.db.unit() as session:
            row = session.get(ExerciseProgress, name)
            return None if row is None else _entry(row)

    def started(self, name: str, now: datetime) -> None:
        with self.db.unit() as session:
            self._row(session, name, now)

    def hint_shown(self, name: str, count: int, now: datetime) -> None:
        with self.db.unit() as session:
            row = self._row(session, name, now)
            row.hints_shown = max(row.hints_shown, count)

    def solution_viewed(self, name: str, now: datetime) -> None:
        with self.db.unit() as session:
            self._row(session, name, now).solution_viewed = True

    def set_rated(self, name: str, rating: int, now: datetime) -> None:
        with self.db.unit() as session:
            self._row(session, name, now).rated = rating

    def checked(self, name: str, status: str, now: datetime) -> ProgressEntry | None:
        """Count one check that ended with `status`; returns the progress before it."""
        with self.db.unit() as session:
            existing = session.get(ExerciseProgress, name)
            before = None if existing is None else _entry(existing)
            row = self._row(session, name, now)
            row.attempts += 1
            row.last_status = status
            row.last_checked_at = to_db_time(now)
            if status == "ok" and row.solved_at is None:
                row.solved_at = to_db_time(now)
        return before
