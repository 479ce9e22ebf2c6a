"""SQLModel tables of mock rounds (created by schema v3 in storage/migrations.py, which a test
keeps in step with these models). A round row holds the clock state; one row per prompt holds the
typed answer and when it was last autosaved; grades hold the confirmed checklist; the report is
stored as JSON. A schema change to these tables is a new step in storage/migrations.py.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import MOCK_GRADE, MOCK_PROMPT, MOCK_REPORT, MOCK_ROUND


class MockRound(SQLModel, table=True):
    __tablename__ = MOCK_ROUND

    id: int | None = Field(default=None, primary_key=True)
    round_key: str = Field(index=True)  # RoundDef.round, e.g. "standard"
    title: str
    status: str = Field(default="running", index=True)  # running | grading | done
    definition_json: str  # the RoundDef as played (phase titles, focus, auto_advance)
    budgets_json: str  # per-phase budgets in seconds, after --minutes scaling
    clock_json: str  # drill.mock.clock.ClockState.to_dict()
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None


class MockPrompt(SQLModel, table=True):
    __tablename__ = MOCK_PROMPT

    id: int | None = Field(default=None, primary_key=True)
    round_id: int = Field(foreign_key=f"{MOCK_ROUND}.id", index=True)
    phase_index: int
    position: int  # order within the round
    prompt_key: str  # inline prompt id, or "card:<card id>"
    card_id: str | None = Field(default=None, index=True)
    deck_id: str | None = None
    text: str
    rubric_json: str  # list[str]
    answer: str = ""
    answer_saved_at: datetime | None = None  # last autosave that changed the answer


class MockGrade(SQLModel, table=True):
    __tablename__ = MOCK_GRADE

    id: int | None = Field(default=None, primary_key=True)
    prompt_id: int = Field(foreign_key=f"{MOCK_PROMPT}.id", index=True)
    bullet_index: int
    bullet: str
    auto_status: str  # drill.mock.coverage.Coverage value: covered | partial | missed
    checked: bool  # what the user confirmed


class MockReport(SQLModel, table=True):
    __tablename__ = MOCK_REPORT

    round_id: int = Field(foreign_key=f"{MOCK_ROUND}.id", primary_key=True)
    created_at: datetime
    overall_band: str
    overall_score: float
    report_json: str  # drill.mock.report.RoundReport
