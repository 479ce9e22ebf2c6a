"""SQLModel table of lab runs (created by schema v3 in storage/migrations.py, which a test keeps
in step with this model).

One row per run started from the TUI: what ran (lab, params, world size, card), when and for how
long, how it ended, a compact result summary (JSON) and the run dir holding result.json and the
per-rank events, so a run can be reopened after a restart. A schema change to this table is a new
step in storage/migrations.py.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import LAB_RUN


class LabRunRow(SQLModel, table=True):
    __tablename__ = LAB_RUN

    id: int | None = Field(default=None, primary_key=True)
    lab: str = Field(index=True)
    params_json: str  # the resolved params, JSON object
    world_size: int
    card_id: str | None = Field(default=None, index=True)  # None: run from the labs screen
    deck_id: str | None = None
    started_at: datetime = Field(index=True)
    duration_s: float | None = None
    status: str = "running"  # running | ok | failed | error | timeout | cancelled
    summary_json: str = "{}"  # drill.labs.history.summarize(result): checks, claims, error
    run_dir: str
    predicted: str | None = None  # text of the predicted choice
    certainty: str | None = None  # low | medium | high
    prediction_right: bool | None = None
    suggested_rating: int | None = None
    rating: int | None = None  # the rating the user accepted or chose (None: not rated)
