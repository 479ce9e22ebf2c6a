"""Exercise progress (storage's exercise repository) and the exercise's checks (the run log).
Its database calls import sqlmodel: keep them off the first-paint path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from drill.runs.log import EXERCISE, RunLog, RunRecord
from drill.times import utc_now

ENDED = ("ok", "failed", "error", "timeout")  # a check that ran to a verdict

if TYPE_CHECKING:
    from storage.db import Database
    from storage.exercises import ProgressEntry
    from trainer_lab.result import LabResult


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


class ProgressStore:
    """Progress per exercise (storage's `db.exercises`) and its checks (the run log, kind
    "exercise", written by drill.runs.recorder.RunRecorder)."""

    def __init__(self, db: Database, now: Callable[[], datetime] = utc_now) -> None:
        self.db = db
        self.now = now

    def get(self, name: str) -> Progress:
        entry = self.db.exercises.get(name)
        return Progress(name) if entry is None else _progress(entry)

    def all(self) -> dict[str, Progress]:
        return {name: _progress(entry) for name, entry in self.db.exercises.all().items()}

    def started(self, name: str) -> None:
        self.db.exercises.started(name, self.now())

    def hint_shown(self, name: str, count: int) -> None:
        self.db.exercises.hint_shown(name, count, self.now())

    def solution_viewed(self, name: str) -> None:
        self.db.exercises.solution_viewed(name, self.now())

    def set_rated(self, name: str, rating: int) -> None:
        self.db.exercises.set_rated(name, rating, self.now())

    def record_check(self, name: str, result: LabResult) -> Progress:
        """Count one check's outcome in the progress; returns the progress before it."""
        before = self.db.exercises.checked(name, result["status"], self.now())
        return Progress(name) if before is None else _progress(before)

    def attempts(self, name: str) -> list[RunRecord]:
        """The exercise's checks that ended (not cancelled) in the run log, oldest first."""
        found = RunLog(self.db).runs(kinds=(EXERCISE,), name=name, statuses=ENDED, limit=10_000)
        return list(reversed(found))


def _progress(entry: ProgressEntry) -> Progress:
    return Progress(entry.name, entry.attempts, entry.hints_shown, entry.solution_viewed,
                    entry.last_status, entry.solved_at, entry.rated, True)  # fmt: skip
