"""The mock-round repository (tables of storage/mock_tables.py). Values are plain: the round's
definition, budgets, clock and report travel as the JSON text drill.mock.store makes of them.
Each method is one short transaction, committed before it returns; a round or prompt that is not
there raises storage.errors.MissingRow."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlmodel import col, select

from storage.db import from_db_time, to_db_time
from storage.errors import MissingRow
from storage.mock_tables import MockGrade, MockPrompt, MockReport, MockRound

if TYPE_CHECKING:
    from storage.db import Database

RUNNING, GRADING, DONE = "running", "grading", "done"


@dataclass(frozen=True)
class NewPrompt:
    phase_index: int
    key: str
    card_id: str | None
    deck_id: str | None
    text: str
    rubric_json: str


@dataclass(frozen=True)
class StoredPrompt:
    id: int
    phase_index: int
    position: int
    key: str
    text: str
    rubric_json: str
    card_id: str | None
    deck_id: str | None
    answer: str
    answer_saved_at: datetime | None


@dataclass(frozen=True)
class StoredRound:
    id: int
    round_key: str
    title: str
    status: str
    definition_json: str
    budgets_json: str
    clock_json: str
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    prompts: list[StoredPrompt]


@dataclass(frozen=True)
class RoundSummary:
    id: int
    round_key: str
    title: str
    status: str
    started_at: datetime
    band: str | None
    score: float | None


@dataclass(frozen=True)
class GradeBullet:
    prompt_id: int
    bullet_index: int
    bullet: str
    auto_status: str
    checked: bool


def _missing(round_id: int) -> MissingRow:
    return MissingRow(f"no mock round with id {round_id}")


class MockRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create_round(
        self,
        round_key: str,
        title: str,
        definition_json: str,
        budgets_json: str,
        clock_json: str,
        prompts: Sequence[NewPrompt],
        now: datetime,
    ) -> int:
        at = to_db_time(now)
        with self.db.unit() as session:
            row = MockRound(round_key=round_key, title=title, status=RUNNING,
                            definition_json=definition_json, budgets_json=budgets_json,
                            clock_json=clock_json, started_at=at, updated_at=at)  # fmt: skip
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
                        rubric_json=prompt.rubric_json,
                    )
                )
            return row.id

    def exists(self, round_id: int) -> bool:
        with self.db.unit() as session:
            return session.get(MockRound, round_id) is not None

    def load(self, round_id: int) -> StoredRound | None:
        with self.db.unit() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                return None
            prompts = session.exec(
                select(MockPrompt)
                .where(MockPrompt.round_id == round_id)
                .order_by(col(MockPrompt.position))
            ).all()
            return StoredRound(
                id=round_id,
                round_key=row.round_key,
                title=row.title,
                status=row.status,
                definition_json=row.definition_json,
                budgets_json=row.budgets_json,
                clock_json=row.clock_json,
                started_at=from_db_time(row.started_at),  # type: ignore[arg-type]
                updated_at=from_db_time(row.updated_at),  # type: ignore[arg-type]
                finished_at=from_db_time(row.finished_at),
                prompts=[
                    StoredPrompt(
                        id=p.id,  # type: ignore[arg-type]
                        phase_index=p.phase_index,
                        position=p.position,
                        key=p.prompt_key,
                        text=p.text,
                        rubric_json=p.rubric_json,
                        card_id=p.card_id,
                        deck_id=p.deck_id,
                        answer=p.answer,
                        answer_saved_at=from_db_time(p.answer_saved_at),
                    )
                    for p in prompts
                ],
            )

    def autosave(
        self,
        round_id: int,
        answers: Mapping[int, str],
        clock_json: str,
        status: str,
        now: datetime,
    ) -> None:
        """Write the changed answers and the clock in one transaction."""
        at = to_db_time(now)
        with self.db.unit() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                raise _missing(round_id)
            for prompt_id, text in answers.items():
                prompt = session.get(MockPrompt, prompt_id)
                if prompt is None or prompt.round_id != round_id:
                    raise MissingRow(f"prompt {prompt_id} is not part of round {round_id}")
                prompt.answer = text
                prompt.answer_saved_at = at
                session.add(prompt)
            row.clock_json = clock_json
            row.status = status
            row.updated_at = at  # type: ignore[assignment]
            if status != RUNNING and row.finished_at is None:
                row.finished_at = at
            session.add(row)

    def latest_unfinished(self) -> int | None:
        with self.db.unit() as session:
            return session.exec(
                select(MockRound.id)
                .where(col(MockRound.status).in_([RUNNING, GRADING]))
                .order_by(col(MockRound.id).desc())
            ).first()

    def previous_cards(self, round_key: str) -> set[str]:
        """Card ids of the most recent round of this kind."""
        with self.db.unit() as session:
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

    def save_report(
        self,
        round_id: int,
        bullets: Sequence[GradeBullet],
        band: str,
        score: float,
        report_json: str,
        finished_at: datetime,
        now: datetime,
    ) -> None:
        """Store the confirmed checklist and the report; the round is done."""
        with self.db.unit() as session:
            row = session.get(MockRound, round_id)
            if row is None:
                raise _missing(round_id)
            for old in session.exec(
                select(MockGrade)
                .join(MockPrompt, col(MockGrade.prompt_id) == col(MockPrompt.id))
                .where(MockPrompt.round_id == round_id)
            ).all():
                session.delete(old)
            for bullet in bullets:
                session.add(
                    MockGrade(
                        prompt_id=bullet.prompt_id,
                        bullet_index=bullet.bullet_index,
                        bullet=bullet.bullet,
                        auto_status=bullet.auto_status,
                        checked=bullet.checked,
                    )
                )
            existing = session.get(MockReport, round_id)
            if existing is not None:
                session.delete(existing)
                session.flush()
            session.add(
                MockReport(
                    round_id=round_id,
                    created_at=to_db_time(now),  # type: ignore[arg-type]
                    overall_band=band,
                    overall_score=score,
                    report_json=report_json,
                )
            )
            row.status = DONE
            if row.finished_at is None:
                row.finished_at = to_db_time(finished_at)
            session.add(row)

    def report_json(self, round_id: int) -> str | None:
        """The stored report; None when the round has none (see exists())."""
        with self.db.unit() as session:
            row = session.get(MockReport, round_id)
            return None if row is None else row.report_json

    def history(self, limit: int = 50) -> list[RoundSummary]:
        with self.db.unit() as session:
            rows = session.exec(
                select(MockRound, MockReport)
                .join(MockReport, isouter=True)
                .order_by(col(MockRound.id).desc())
                .limit(limit)
            ).all()
            return [
                RoundSummary(
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
