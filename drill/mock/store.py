"""Mock rounds kept in the database: the domain types of drill.mock (RoundDef, ClockState,
RoundReport) to and from the plain values of storage's mock repository (`db.mocks`).

Imports storage.db (sqlmodel): load it off the first-paint path (the mock CLI and screens import
it lazily). Every method is one short transaction, committed before it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from drill.mock.clock import ClockState
from drill.mock.errors import MockError
from drill.mock.models import RoundDef
from drill.mock.report import RoundReport
from drill.mock.selection import PlannedPrompt
from drill.times import utc_now
from storage.db import Database
from storage.errors import MissingRow
from storage.mocks import DONE, GRADING, RUNNING, GradeBullet, NewPrompt, StoredPrompt

__all__ = ["DONE", "GRADING", "RUNNING", "GradeRow", "HistoryRow", "MockStore", "SavedPrompt",
           "SavedRound"]  # fmt: skip


@dataclass(frozen=True)
class SavedPrompt:
    id: int
    phase_index: int
    position: int
    key: str
    text: str
    rubric: list[str]
    card_id: str | None
    deck_id: str | None
    answer: str
    answer_saved_at: datetime | None


@dataclass(frozen=True)
class SavedRound:
    id: int
    round_key: str
    title: str
    status: str
    definition: RoundDef
    budgets_s: list[float]
    clock_state: ClockState
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    prompts: list[SavedPrompt]


@dataclass(frozen=True)
class HistoryRow:
    id: int
    round_key: str
    title: str
    status: str
    started_at: datetime
    band: str | None
    score: float | None


@dataclass(frozen=True)
class GradeRow:
    prompt_id: int
    bullets: list[str]
    auto: list[str]
    checked: list[bool]


class MockStore:
    def __init__(self, db: Database, wall: Callable[[], datetime] = utc_now) -> None:
        self.db = db
        self.wall = wall

    def create_round(
        self,
        definition: RoundDef,
        budgets_s: list[float],
        prompts: list[PlannedPrompt],
        clock_state: ClockState,
    ) -> int:
        planned = [
            NewPrompt(p.phase_index, p.key, p.card_id, p.deck_id, p.text,
                      json.dumps(list(p.rubric)))
            for p in prompts
        ]  # fmt: skip
        return self.db.mocks.create_round(
            definition.round,
            definition.title,
            definition.model_dump_json(),
            json.dumps(budgets_s),
            json.dumps(clock_state.to_dict()),
            planned,
            self.wall(),
        )

    def load(self, round_id: int) -> SavedRound:
        row = self.db.mocks.load(round_id)
        if row is None:
            raise MockError(f"no mock round with id {round_id} (see `drill mock history`)")
        return SavedRound(
            id=round_id,
            round_key=row.round_key,
            title=row.title,
            status=row.status,
            definition=RoundDef.model_validate_json(row.definition_json),
            budgets_s=[float(x) for x in json.loads(row.budgets_json)],
            clock_state=ClockState.from_dict(json.loads(row.clock_json)),
            started_at=row.started_at,
            updated_at=row.updated_at,
            finished_at=row.finished_at,
            prompts=[_prompt(p) for p in row.prompts],
        )

    def autosave(
        self, round_id: int, answers: dict[int, str], clock_state: ClockState, status: str
    ) -> datetime:
        """Write the changed answers and the clock in one transaction; returns the save time."""
        now = self.wall()
        try:
            self.db.mocks.autosave(
                round_id, answers, json.dumps(clock_state.to_dict()), status, now
            )
        except MissingRow as missing:
            raise MockError(str(missing)) from None
        return now

    def latest_unfinished(self) -> int | None:
        return self.db.mocks.latest_unfinished()

    def previous_cards(self, round_key: str) -> set[str]:
        """Card ids of the most recent round of this kind (the next one avoids them)."""
        return self.db.mocks.previous_cards(round_key)

    def save_report(self, round_id: int, grades: list[GradeRow], report: RoundReport) -> None:
        """Store the confirmed checklist and the report; the round is done."""
        bullets = [
            GradeBullet(grade.prompt_id, index, bullet, auto, checked)
            for grade in grades
            for index, (bullet, auto, checked) in enumerate(
                zip(grade.bullets, grade.auto, grade.checked, strict=True)
            )
        ]
        try:
            self.db.mocks.save_report(
                round_id, bullets, report.band, report.score, report.model_dump_json(),
                report.finished_at, self.wall(),
            )  # fmt: skip
        except MissingRow as missing:
            raise MockError(str(missing)) from None

    def report(self, round_id: int) -> RoundReport:
        text = self.db.mocks.report_json(round_id)
        if text is None:
            if self.db.mocks.exists(round_id):
                raise MockError(
                    f"mock round {round_id} has no report yet: finish and grade it with "
                    f"`drill mock resume {round_id}`"
                )
            raise MockError(f"no mock round with id {round_id} (see `drill mock history`)")
        return RoundReport.model_validate_json(text)

    def history(self, limit: int = 50) -> list[HistoryRow]:
        return [
            HistoryRow(r.id, r.round_key, r.title, r.status, r.started_at, r.band, r.score)
            for r in self.db.mocks.history(limit)
        ]


def _prompt(p: StoredPrompt) -> SavedPrompt:
    return SavedPrompt(
        id=p.id,
        phase_index=p.phase_index,
        position=p.position,
        key=p.key,
        text=p.text,
        rubric=list(json.loads(p.rubric_json)),
        card_id=p.card_id,
        deck_id=p.deck_id,
        answer=p.answer,
        answer_saved_at=p.answer_saved_at,
    )
