"""Persistence of mock rounds over helper A's Database (storage.db) and storage/mock_tables.py.

Imports sqlmodel: load it off the first-paint path (the mock CLI and screens import it lazily).
Every method is one short transaction, committed before it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlmodel import col, select

from drill.mock.clock import ClockState
from drill.mock.errors import MockError
from drill.mock.models import RoundDef
from drill.mock.report import RoundReport
from drill.mock.selection import PlannedPrompt
from storage.db import Database, from_db_time, to_db_time
from storage.mock_tables import MockGrade, MockPrompt, MockReport, MockRound

RUNNING, GRADING, DONE = "running", "grading", "done"


def utc_now() -> datetime:
    return datetime.now(UTC)


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
        now = to_db_time(self.wall())
        with self.db.session() as session:
            row = MockRound(
                round_key=definition.round,
                title=definition.title,
                status=RUNNING,
                definition_json=definition.model_dump_json(),
                budgets_json=json.dumps(budgets_s),
                clock_json=json.dumps(clock_state.to_dict()),
                started_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            for position, prompt in enumerate(prompts):
                session.add(
                    MockPrompt(
                        round_id=row.id,
                        phase_index=prompt.phase_index,
                        position=position,
                        prompt_key=prompt.key,
                        card_id=prompt.card_id,
                        deck_id=prompt.deck_id,
                        text=prompt.text,
                        rubric_json=json.dumps(list(prompt.rubric)),
                    )
                )
            return row.id

    def load(self, round_id: int) -> SavedRound:
        with self.db.session() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                raise MockError(f"no mock round with id {round_id} (see `drill mock history`)")
            prompts = session.exec(
                select(MockPrompt)
                .where(MockPrompt.round_id == round_id)
                .order_by(col(MockPrompt.position))
            ).all()
            return SavedRound(
                id=round_id,
                round_key=row.round_key,
                title=row.title,
                status=row.status,
                definition=RoundDef.model_validate_json(row.definition_json),
                budgets_s=[float(x) for x in json.loads(row.budgets_json)],
                clock_state=ClockState.from_dict(json.loads(row.clock_json)),
                started_at=from_db_time(row.started_at),  # type: ignore[arg-type]
                updated_at=from_db_time(row.updated_at),  # type: ignore[arg-type]
                finished_at=from_db_time(row.finished_at),
                prompts=[
                    SavedPrompt(
                        id=p.id,  # type: ignore[arg-type]
                        phase_index=p.phase_index,
                        position=p.position,
                        key=p.prompt_key,
                        text=p.text,
                        rubric=list(json.loads(p.rubric_json)),
                        card_id=p.card_id,
                        deck_id=p.deck_id,
                        answer=p.answer,
                        answer_saved_at=from_db_time(p.answer_saved_at),
                    )
                    for p in prompts
                ],
            )

    def autosave(
        self, round_id: int, answers: dict[int, str], clock_state: ClockState, status: str
    ) -> datetime:
        """Write the changed answers and the clock in one transaction; returns the save time."""
        now = self.wall()
        with self.db.session() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                raise MockError(f"no mock round with id {round_id}")
            for prompt_id, text in answers.items():
                prompt = session.get(MockPrompt, prompt_id)
                if prompt is None or prompt.round_id != round_id:
                    raise MockError(f"prompt {prompt_id} is not part of round {round_id}")
                prompt.answer = text
                prompt.answer_saved_at = to_db_time(now)
                session.add(prompt)
            row.clock_json = json.dumps(clock_state.to_dict())
            row.status = status
            row.updated_at = to_db_time(now)  # type: ignore[assignment]
            if status != RUNNING and row.finished_at is None:
                row.finished_at = to_db_time(now)
            session.add(row)
        return now

    def latest_unfinished(self) -> int | None:
        with self.db.session() as session:
            return session.exec(
                select(MockRound.id)
                .where(col(MockRound.status).in_([RUNNING, GRADING]))
                .order_by(col(MockRound.id).desc())
            ).first()

    def previous_cards(self, round_key: str) -> set[str]:
        """Card ids of the most recent round of this kind (the next one avoids them)."""
        with self.db.session() as session:
            last = session.exec(
                select(MockRound.id)
                .where(MockRound.round_key == round_key)
                .order_by(col(MockRound.id).desc())
            ).first()
            if last is None:
                return set()
            rows = session.exec(
                select(MockPrompt.card_id).where(
                    MockPrompt.round_id == last, col(MockPrompt.card_id).is_not(None)
                )
            ).all()
            return {card_id for card_id in rows if card_id}

    def save_report(self, round_id: int, grades: list[GradeRow], report: RoundReport) -> None:
        """Store the confirmed checklist and the report; the round is done."""
        with self.db.session() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                raise MockError(f"no mock round with id {round_id}")
            for old in session.exec(
                select(MockGrade)
                .join(MockPrompt, col(MockGrade.prompt_id) == col(MockPrompt.id))
                .where(MockPrompt.round_id == round_id)
            ).all():
                session.delete(old)
            for grade in grades:
                for index, (bullet, auto, checked) in enumerate(
                    zip(grade.bullets, grade.auto, grade.checked, strict=True)
                ):
                    session.add(
                        MockGrade(
                            prompt_id=grade.prompt_id,
                            bullet_index=index,
                            bullet=bullet,
                            auto_status=auto,
                            checked=checked,
                        )
                    )
            existing = session.get(MockReport, round_id)
            if existing is not None:
                session.delete(existing)
                session.flush()
            session.add(
                MockReport(
                    round_id=round_id,
                    created_at=to_db_time(self.wall()),  # type: ignore[arg-type]
                    overall_band=report.band,
                    overall_score=report.score,
                    report_json=report.model_dump_json(),
                )
            )
            row.status = DONE
            if row.finished_at is None:
                row.finished_at = to_db_time(report.finished_at)
            session.add(row)

    def report(self, round_id: int) -> RoundReport:
        with self.db.session() as session:
            row = session.get(MockReport, round_id)
            if row is None:
                exists = session.get(MockRound, round_id) is not None
                if exists:
                    raise MockError(
                        f"mock round {round_id} has no report yet: finish and grade it with "
                        f"`drill mock resume {round_id}`"
                    )
                raise MockError(f"no mock round with id {round_id} (see `drill mock history`)")
            return RoundReport.model_validate_json(row.report_json)

    def history(self, limit: int = 50) -> list[HistoryRow]:
        with self.db.session() as session:
            rows = session.exec(
                select(MockRound, MockReport)
                .join(MockReport, isouter=True)
                .order_by(col(MockRound.id).desc())
                .limit(limit)
            ).all()
            return [
                HistoryRow(
                    id=r.id,  # type: ignore[arg-type]
                    round_key=r.round_key,
                    title=r.title,
                    status=r.status,
                    started_at=from_db_time(r.started_at),  # type: ignore[arg-type]
                    band=rep.overall_band if rep else None,
                    score=rep.overall_score if rep else None,
                )
                for r, rep in rows
            ]
