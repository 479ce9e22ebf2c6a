"""The lab runs: the run log's lab runs (kind "lab", and the coding-round gradings recorded as
lab "mock-coding", kind "coding"), as the Labs screen, the lab panel and `drill lab` read them.

A row is written `running` when a run starts and completed when it ends, by the one recorder
(drill.runs.recorder); the run dir keeps result.json and the events, so any run can be reopened
after a restart with `RunRecord.load_result()`. Rows left `running` by a process that is gone
are closed as `cancelled` by `close_interrupted()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drill.labs.controller import LabOutcome
from drill.runs.log import CODING, LAB, RunLog, RunRecord, summarize_result

if TYPE_CHECKING:
    from storage.db import Database

__all__ = ["LAB_KINDS", "LabRuns", "RunRecord", "summarize"]

LAB_KINDS = (LAB, CODING)


def summarize(outcome: LabOutcome) -> dict[str, Any]:
    """The compact, JSON-able summary kept in the row (the full result stays in the run dir)."""
    return summarize_result(
        outcome.result,
        claims=[{"claim": c.claim, "passed": c.passed, "detail": c.detail} for c in outcome.claims],
        observed_choice=outcome.observed_choice,
        error=outcome.error,
    )


class LabRuns:
    """Lab runs in the run log; each call is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.log = RunLog(db)

    def set_rating(self, run_id: int, rating: int) -> None:
        self.log.set_rating(run_id, rating)

    def get(self, run_id: int) -> RunRecord | None:
        return self.log.get(run_id)

    def runs(
        self, *, card_id: str | None = None, lab: str | None = None, limit: int = 50
    ) -> list[RunRecord]:
        """Newest first."""
        return self.log.runs(kinds=LAB_KINDS, card_id=card_id, name=lab, limit=limit)

    def last_by_lab(self) -> dict[str, RunRecord]:
        """The newest finished run of each lab."""
        return self.log.last_by_name(LAB_KINDS)

    def close_interrupted(self, running_ids: set[int] | None = None) -> int:
        """See drill.runs.log.RunLog.close_interrupted (every kind: one lifecycle)."""
        return self.log.close_interrupted(running_ids)
