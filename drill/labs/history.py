"""Lab runs started from the TUI, stored in the `lab_run` table (storage/lab_tables.py).

A row is written when a run starts (status `running`, the owning process id in the summary) and
completed when it ends; the run dir keeps result.json and the events, so any run can be reopened
after a restart with `RunRecord.load_result()`. A row still `running` whose process is gone
(the app was killed before it could record the end) is closed as `cancelled` by
`close_interrupted()`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.labs.controller import LabOutcome, Prediction
from trainer_lab.result import LabResult, failed_checks, read_result

if TYPE_CHECKING:
    from storage.db import Database
    from storage.lab_tables import LabRunRow


def summarize(outcome: LabOutcome) -> dict[str, Any]:
    """The compact, JSON-able summary kept in the row (the full result stays in the run dir)."""
    checks = outcome.result["checks"]
    return {
        "status": outcome.status,
        "checks_passed": sum(1 for c in checks if c["passed"]),
        "checks_total": len(checks),
        "failed_checks": [c["name"] for c in failed_checks(outcome.result)],
        "claims": [
            {"claim": c.claim, "passed": c.passed, "detail": c.detail} for c in outcome.claims
        ],
        "observed_choice": outcome.observed_choice,
        "error": outcome.error,
    }


@dataclass(frozen=True)
class RunRecord:
    id: int
    lab: str
    params: dict[str, Any]
    world_size: int
    card_id: str | None
    deck_id: str | None
    started_at: datetime
    duration_s: float | None
    status: str
    summary: dict[str, Any]
    run_dir: Path
    predicted: str | None
    certainty: str | None
    prediction_right: bool | None
    suggested_rating: int | None
    rating: int | None

    def load_result(self) -> LabResult | None:
        """The run dir's result; None when it is missing, unreadable or off-contract."""
        return read_result(self.run_dir)

    def short(self) -> str:
        """One line: when, status, checks."""
        when = self.started_at.strftime("%Y-%m-%d %H:%M")
        summary = self.summary
        checks = ""
        if summary.get("checks_total"):
            checks = f" · checks {summary['checks_passed']}/{summary['checks_total']}"
        took = f" · {self.duration_s:.1f} s" if self.duration_s is not None else ""
        return f"{when} · {self.status}{checks}{took}"


def _record(row: LabRunRow) -> RunRecord:
    from storage.db import from_db_time

    assert row.id is not None
    started = from_db_time(row.started_at)
    assert started is not None
    return RunRecord(
        id=row.id,
        lab=row.lab,
        params=json.loads(row.params_json),
        world_size=row.world_size,
        card_id=row.card_id,
        deck_id=row.deck_id,
        started_at=started,
        duration_s=row.duration_s,
        status=row.status,
        summary=json.loads(row.summary_json or "{}"),
        run_dir=Path(row.run_dir),
        predicted=row.predicted,
        certainty=row.certainty,
        prediction_right=row.prediction_right,
        suggested_rating=row.suggested_rating,
        rating=row.rating,
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LabHistory:
    """Repository of lab runs over the app's Database; each call is one short transaction."""

    def __init__(self, db: Database) -> None:
        import storage.lab_tables  # noqa: F401  (the row model, for queries below)

        self.db = db

    def start(
        self,
        lab: str,
        params: dict[str, Any],
        world_size: int,
        run_dir: Path,
        started_at: datetime,
        *,
        card_id: str | None = None,
        deck_id: str | None = None,
        predicted: str | None = None,
        prediction: Prediction | None = None,
    ) -> int:
        from storage.db import to_db_time
        from storage.lab_tables import LabRunRow

        row = LabRunRow(
            lab=lab,
            params_json=json.dumps(params, sort_keys=True),
            world_size=world_size,
            card_id=card_id,
            deck_id=deck_id,
            started_at=to_db_time(started_at),
            status="running",
            summary_json=json.dumps({"pid": os.getpid()}),
            run_dir=str(run_dir),
            predicted=predicted,
            certainty=prediction.certainty if prediction else None,
        )
        with self.db.session() as session:
            session.add(row)
            session.flush()
            assert row.id is not None
            return row.id

    def finish(self, run_id: int, outcome: LabOutcome, duration_s: float) -> None:
        from storage.lab_tables import LabRunRow

        with self.db.session() as session:
            row = session.get(LabRunRow, run_id)
            if row is None:
                raise KeyError(f"no lab run {run_id}")
            row.status = outcome.status
            row.duration_s = round(duration_s, 3)
            row.summary_json = json.dumps(summarize(outcome), default=str)
            row.prediction_right = outcome.right
            row.suggested_rating = outcome.suggested_rating
            session.add(row)

    def set_rating(self, run_id: int, rating: int) -> None:
        from storage.lab_tables import LabRunRow

        with self.db.session() as session:
            row = session.get(LabRunRow, run_id)
            if row is None:
                raise KeyError(f"no lab run {run_id}")
            row.rating = rating
            session.add(row)

    def get(self, run_id: int) -> RunRecord | None:
        from storage.lab_tables import LabRunRow

        with self.db.session() as session:
            row = session.get(LabRunRow, run_id)
            return None if row is None else _record(row)

    def runs(
        self, *, card_id: str | None = None, lab: str | None = None, limit: int = 50
    ) -> list[RunRecord]:
        """Newest first."""
        from sqlmodel import col, select

        from storage.lab_tables import LabRunRow

        query = select(LabRunRow).order_by(col(LabRunRow.id).desc()).limit(limit)
        if card_id is not None:
            query = query.where(LabRunRow.card_id == card_id)
        if lab is not None:
            query = query.where(LabRunRow.lab == lab)
        with self.db.session() as session:
            return [_record(row) for row in session.exec(query)]

    def last_by_lab(self) -> dict[str, RunRecord]:
        """The newest finished run of each lab."""
        latest: dict[str, RunRecord] = {}
        for record in self.runs(limit=1000):
            if record.status != "running" and record.lab not in latest:
                latest[record.lab] = record
        return latest

    def close_interrupted(self, running_ids: set[int] | None = None) -> int:
        """Mark `running` rows as cancelled when their process is gone, or is this process and
        the run is not in `running_ids` (None: leave this process's rows alone); returns how
        many were closed."""
        from sqlmodel import select

        from storage.lab_tables import LabRunRow

        closed = 0
        with self.db.session() as session:
            for row in session.exec(select(LabRunRow).where(LabRunRow.status == "running")):
                pid = int(json.loads(row.summary_json or "{}").get("pid", 0))
                alive = pid > 0 and _pid_alive(pid)
                if alive and pid != os.getpid():
                    continue
                if pid == os.getpid() and (running_ids is None or row.id in running_ids):
                    continue
                row.status = "cancelled"
                row.summary_json = json.dumps(
                    {"status": "cancelled", "error": "the app stopped before the run ended"}
                )
                session.add(row)
                closed += 1
        return closed
