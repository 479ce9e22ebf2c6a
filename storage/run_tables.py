"""SQLModel table of the run log (created by schema v6 in storage/migrations.py, which a test
keeps in step with this model): one row per graded run, whatever ran it.

`kind` says what ran (storage.schema_names.RUN_KINDS): a lab from the TUI or `drill lab run`, an
exercise check, a coding-round grading, a `drill verify` job. Every row has one lifecycle: written
`running` when the run starts (with the owning process id), finished with its status, checks and
a compact summary (JSON), or closed as `cancelled` when its process is gone. The run dir keeps
result.json and the events, so a run can be reopened; `version` is the lab source version a
verify result was produced by (its cache key, with name, params and world size).
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import RUN_LOG


class RunLogRow(SQLModel, table=True):
    __tablename__ = RUN_LOG

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(index=True)  # lab | exercise | coding | verify
    name: str = Field(index=True)  # the lab, exercise or round that ran
    params_json: str = "{}"  # the resolved params, JSON object
    world_size: int = 0
    card_id: str | None = Field(default=None, index=True)
    deck_id: str | None = None
    started_at: datetime = Field(index=True)
    finished_at: datetime | None = None
    duration_s: float | None = None
    status: str = "running"  # running | ok | failed | error | timeout | cancelled
    checks_passed: int | None = None
    checks_total: int | None = None
    summary_json: str = "{}"  # failed checks, claims, observed choice, error
    run_dir: str = ""
    version: str | None = None  # lab source version (verify's cache key)
    pid: int | None = None  # the process that owns a running row
    predicted: str | None = None  # text of the predicted choice
    certainty: str | None = None  # low | medium | high
    prediction_right: bool | None = None
    suggested_rating: int | None = None
    rating: int | None = None  # the rating the user accepted or chose (None: not rated)
