"""SQLModel table of lab runs, on the shared metadata (storage.db imports this module before
create_all, so the table appears on existing databases without a migration step).

One row per run started from the TUI: what ran (lab, params, world size, card), when and for how
long, how it ended, a compact result summary (JSON) and the run dir holding result.json and the
per-rank events, so a run can be reopened after a restart. Schema changes to this table go
through storage/migrations.py like the core tables.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

LAB_RUN = "lab_run"


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
    summary_json: str = "{}"  # drill.lab_history.summarize(result): checks, claims, error
    run_dir: str
    predicted: str | None = None  # text of the predicted choice
    certainty: str | None = None  # low | medium | high
    prediction_right: bool | None = None
    suggested_rating: int | None = None
    rating: int | None = None  # the rating the user accepted or chose (None: not rated)
