"""Exercise progress and attempts in the database (tables exercise_progress and exercise_attempt,
storage/exercise_tables.py). Imports sqlmodel: keep it off the first-paint path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from trainer_lab.result import LabResult, failed_checks

if TYPE_CHECKING:
    from storage.db import Database


@dataclass(frozen=True)
class Progress:
    name: str
    attempts: int = 0
    hints_shown: int = 0
    solution_viewed: bool = False
    last_status: str | None = None
    solved_at: datetime | None = None
    rated: int | None = None
    started: bool = False

    @property
    def status(self) -> str:
        """not started | started | failing | solved."""
        if self.solved_at is not None:
            return "solved"
        if self.last_status is not None:
            return "failing"
        return "started" if self.started else "not started"


def _now() -> datetime:
    return datetime.now(UTC)


class ProgressStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def _row(self, session: Any, name: str, create: bool) -> Any:
        from storage.db import to_db_time
        from storage.exercise_tables import ExerciseProgress

        row = session.get(ExerciseProgress, name)
        if row is None and create:
            row = ExerciseProgress(name=name, started_at=to_db_time(_now()))
            session.add(row)
        return row

    def get(self, name: str) -> Progress:
        return self.all().get(name, Progress(name))

    def all(self) -> dict[str, Progress]:
        from sqlmodel import select

        from storage.db import from_db_time
        from storage.exercise_tables import ExerciseProgress

        with self.db.session() as session:
            rows = session.exec(select(ExerciseProgress)).all()
            return {
                r.name: Progress(r.name, r.attempts, r.hints_shown, r.solution_viewed,
                                 r.last_status, from_db_time(r.solved_at), r.rated, True)
                for r in rows
            }  # fmt: skip

    def started(self, name: str) -> None:
        with self.db.session() as session:
            self._row(session, name, create=True)

    def hint_shown(self, name: str, count: int) -> None:
        with self.db.session() as session:
            row = self._row(session, name, create=True)
            row.hints_shown = max(row.hints_shown, count)

    def solution_viewed(self, name: str) -> None:
        with self.db.session() as session:
            self._row(session, name, create=True).solution_viewed = True

    def set_rated(self, name: str, rating: int) -> None:
        with self.db.session() as session:
            self._row(session, name, create=True).rated = rating

    def record_attempt(self, name: str, result: LabResult) -> Progress:
        """Store one check's outcome; returns the progress before this attempt."""
        from storage.db import to_db_time
        from storage.exercise_tables import ExerciseAttempt

        before = self.get(name)
        now = to_db_time(_now())
        checks = result["checks"]
        with self.db.session() as session:
            row = self._row(session, name, create=True)
            row.attempts += 1
            row.last_status = result["status"]
            row.last_checked_at = now
            if result["status"] == "ok" and row.solved_at is None:
                row.solved_at = now
            session.add(
                ExerciseAttempt(
                    name=name,
                    checked_at=now,
                    status=result["status"],
                    passed=sum(1 for c in checks if c["passed"]),
                    total=len(checks),
                    duration_s=result["duration_s"],
                    failed_json=json.dumps([c["name"] for c in failed_checks(result)]),
                    run_dir=result["out_dir"],
                )
            )
        return before

    def attempts(self, name: str) -> list[dict[str, Any]]:
        from sqlmodel import col, select

        from storage.exercise_tables import ExerciseAttempt

        with self.db.session() as session:
            rows = session.exec(
                select(ExerciseAttempt)
                .where(ExerciseAttempt.name == name)
                .order_by(col(ExerciseAttempt.id))
            ).all()
            return [r.model_dump() for r in rows]
