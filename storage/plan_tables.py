"""SQLModel table of the interview plan (created by schema v7 in storage/migrations.py, which a
test keeps in step with this model): the history of `drill plan`, one row per change. The newest
row is in force; a row with `ended` set means the plan was cleared (drill plan --clear). Rows are
never updated or deleted, so a change of date or role keeps what came before.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import INTERVIEW_PLAN


class InterviewPlanRow(SQLModel, table=True):
    __tablename__ = INTERVIEW_PLAN

    id: int | None = Field(default=None, primary_key=True)
    interview_day: str  # the learner date of the interview, 'YYYY-MM-DD'
    role: str  # a role of decks/roles.toml
    minutes_per_day: int  # the daily study budget
    target_recall: float  # predicted recall on the day the plan aims for
    created_at: datetime  # when this row was recorded (UTC)
    ended: bool = False  # True: the plan was cleared at created_at (the other columns repeat)
