"""The interview-plan repository (table interview_plan, storage/plan_tables.py): the history of
`drill plan`. Append-only: every change is a new row, the newest row is in force, a row with
`ended` set means "no plan". Each method is one short transaction (BEGIN IMMEDIATE, storage.db),
so two copies of drill changing the plan at once queue and both rows are kept.

Rows are read raw and checked against their domains (storage.domains), as the light reader does
(storage.snapshot.plan_row): a damaged row is never in force and never fails the read.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from storage.db import to_db_time
from storage.plan_tables import InterviewPlanRow
from storage.snapshot import NEWEST_PLAN, PLAN_COLUMNS, PlanRow, plan_row

if TYPE_CHECKING:
    from sqlmodel import Session

    from storage.db import Database

_ALL_PLANS = f"SELECT {', '.join(PLAN_COLUMNS)} FROM {InterviewPlanRow.__tablename__} ORDER BY id"


def _rows(session: Session, query: str) -> list[Mapping[str, Any]]:
    result = session.connection().exec_driver_sql(query)
    names = list(result.keys())
    return [dict(zip(names, values, strict=True)) for values in result]


class PlanRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self,
        interview_day: date,
        role: str,
        minutes_per_day: int,
        target_recall: float,
        at: datetime,
    ) -> PlanRow:
        """Append a profile; it is in force from now on (the rows before it are kept)."""
        row = InterviewPlanRow(
            interview_day=interview_day.isoformat(),
            role=role,
            minutes_per_day=minutes_per_day,
            target_recall=target_recall,
            created_at=to_db_time(at),  # type: ignore[arg-type]
        )
        with self.db.unit() as session:
            session.add(row)
        return PlanRow(interview_day, role, minutes_per_day, target_recall, to_db_time(at))  # type: ignore[arg-type]

    def end(self, at: datetime) -> bool:
        """Clear the plan (drill plan --clear): append an ended row repeating the profile in
        force. False, writing nothing, when no plan is in force (checked under the write lock)."""
        with self.db.unit() as session:
            current, _ = self._newest(session)
            if current is None:
                return False
            session.add(
                InterviewPlanRow(
                    interview_day=current.interview_day.isoformat(),
                    role=current.role,
                    minutes_per_day=current.minutes_per_day,
                    target_recall=current.target_recall,
                    created_at=to_db_time(at),  # type: ignore[arg-type]
                    ended=True,
                )
            )
        return True

    def current(self) -> PlanRow | None:
        """The profile in force: None without a row, after --clear, or when the newest row is
        damaged (see damaged())."""
        with self.db.unit() as session:
            return self._newest(session)[0]

    def damaged(self) -> str | None:
        """What is wrong with the newest row when it is damaged (then no plan is in force)."""
        with self.db.unit() as session:
            return self._newest(session)[1]

    def history(self) -> list[tuple[PlanRow, bool]]:
        """Every sound row, oldest first, as (profile, ended); damaged rows are left out."""
        with self.db.unit() as session:
            rows = _rows(session, _ALL_PLANS)
        found = []
        for values in rows:
            plan, ended, _ = plan_row(values)
            if plan is not None:
                found.append((plan, ended))
        return found

    @staticmethod
    def _newest(session: Session) -> tuple[PlanRow | None, str | None]:
        rows = _rows(session, NEWEST_PLAN)
        if not rows:
            return None, None
        plan, ended, damaged = plan_row(rows[0])
        return (None if ended else plan), damaged
