"""SQLModel table of exercise progress (created by schema v5 in storage/migrations.py, which a
test keeps in step with this model): one row per started exercise (hints shown, whether the
solution was viewed, when it was solved, the rating given to its card). Each check is a run in
the run log (storage/run_tables.py, kind "exercise"; until v6 the exercise_attempt table).
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import EXERCISE_PROGRESS


class ExerciseProgress(SQLModel, table=True):
    __tablename__ = EXERCISE_PROGRESS

    name: str = Field(primary_key=True)  # trainer_lab.exercises SPEC.name
    started_at: datetime
    attempts: int = 0  # checks run
    hints_shown: int = 0
    solution_viewed: bool = False
    last_status: str | None = None  # ok | failed | cancelled (trainer_lab.result status)
    last_checked_at: datetime | None = None
    solved_at: datetime | None = None  # first check that passed
    rated: int | None = None  # the rating given to the linked card on solving
