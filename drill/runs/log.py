"""Reading the run log: RunRecord (one run, reopenable from its run dir) and RunLog, the service
over storage's run repository that the history screens, the labs overview and the CLI use. A
`running` row whose process is gone (the app was killed before it recorded the end) is closed as
`cancelled` by close_interrupted()."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.times import utc_now
from trainer_lab.result import LabResult, failed_checks, read_result

if TYPE_CHECKING:
    from storage.db import Database
    from storage.runs import RunEntry

LAB, EXERCISE, CODING, VERIFY = "lab", "exercise", "coding", "verify"
ENDED_BY_EXIT = {"status": "cancelled", "error": "the app stopped before the run ended"}


def summarize_result(result: LabResult, **extra: Any) -> dict[str, Any]:
    """The compact, JSON-able summary kept in the row (the full result stays in the run dir)."""
    checks = result["checks"]
    return {
        "status": result["status"],
        "checks_passed": sum(1 for c in checks if c["passed"]),
        "checks_total": len(checks),
        "failed_checks": [c["name"] for c in failed_checks(result)],
        **extra,
    }


@dataclass(frozen=True)
class RunRecord:
    id: int
    kind: str
    name: str
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
    finished_at: datetime | None = None
    version: str | None = None

    @classmethod
    def of(cls, entry: RunEntry) -> RunRecord:
        return cls(
            entry.id, entry.kind, entry.name, entry.params, entry.world_size, entry.card_id,
            entry.deck_id, entry.started_at, entry.duration_s, entry.status, entry.summary,
            Path(entry.run_dir), entry.predicted, entry.certainty, entry.prediction_right,
            entry.suggested_rating, entry.rating, entry.finished_at, entry.version,
        )  # fmt: skip

    @property
    def lab(self) -> str:
        """The lab (or exercise, or round) that ran."""
        return self.name

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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLog:
    """The run log over the app's Database; each call is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, run_id: int) -> RunRecord | None:
        entry = self.db.runs.get(run_id)
        return None if entry is None else RunRecord.of(entry)

    def runs(
        self,
        *,
        kinds: Collection[str] | None = None,
        name: str | None = None,
        card_id: str | None = None,
        params: Mapping[str, Any] | None = None,
        world_size: int | None = None,
        version: str | None = None,
        statuses: Collection[str] | None = None,
        limit: int = 50,
    ) -> list[RunRecord]:
        """Newest first, matching every filter given."""
        found = self.db.runs.find(kinds=kinds, name=name, card_id=card_id, params=params,
                                  world_size=world_size, version=version, statuses=statuses,
                                  limit=limit)  # fmt: skip
        return [RunRecord.of(entry) for entry in found]

    def last_by_name(self, kinds: Collection[str]) -> dict[str, RunRecord]:
        """The newest finished run of each name among these kinds."""
        latest: dict[str, RunRecord] = {}
        for record in self.runs(kinds=kinds, limit=1000):
            if record.status != "running" and record.name not in latest:
                latest[record.name] = record
        return latest

    def set_rating(self, run_id: int, rating: int) -> None:
        self.db.runs.set_rating(run_id, rating)

    def close_interrupted(self, running_ids: set[int] | None = None) -> int:
        """Close `running` rows as cancelled when their process is gone, or is this process and
        the run is not in `running_ids` (None: leave this process's rows alone); returns how
        many were closed."""
        me = os.getpid()
        gone = []
        for run_id, pid in self.db.runs.running():
            pid = pid or 0
            if pid != me and pid > 0 and _pid_alive(pid):
                continue
            if pid == me and (running_ids is None or run_id in running_ids):
                continue
            gone.append(run_id)
        if not gone:
            return 0
        return self.db.runs.close_running(gone, "cancelled", ENDED_BY_EXIT, utc_now())
