"""Records a lab run started outside the TUI (`drill lab run`) in the lab history, so the Labs
screen lists it like its own runs: a `running` row before the run, finished after it, closed as
cancelled when the run ends without a result.

The history is a convenience next to the run itself: a database that cannot be opened or written
only costs a notice line, never the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.errors import DatabaseError, one_line

if TYPE_CHECKING:
    from drill.database import Database
    from drill.labs.history import LabHistory
    from trainer_lab.result import LabResult

HISTORY_ERRORS = (DatabaseError, OSError, KeyError, ValueError)


def _open_app_database() -> Database:
    from drill.database import open_app_database

    return open_app_database()


class RunRecorder:
    """start() before the run, then finish(result) or abandon(); close() at the end."""

    def __init__(
        self,
        notify: Callable[[str], None],
        open_db: Callable[[], Database] = _open_app_database,
    ) -> None:
        self.notify = notify
        self.open_db = open_db
        self.db: Database | None = None
        self.history: LabHistory | None = None
        self.run_id: int | None = None
        self._started = time.monotonic()

    def _failed(self, what: str, error: BaseException) -> None:
        self.notify(f"drill lab: notice: {what} in the lab history: {one_line(error)}")
        self.run_id = None

    def start(self, lab: str, params: dict[str, Any], world_size: int, run_dir: Path) -> None:
        from drill.labs.history import LabHistory

        self._started = time.monotonic()
        try:
            self.db = self.open_db()
            self.history = LabHistory(self.db)
            self.run_id = self.history.start(lab, params, world_size, run_dir, datetime.now(UTC))
        except HISTORY_ERRORS as error:
            self._failed("this run is not recorded", error)

    def finish(self, result: LabResult) -> None:
        if self.history is None or self.run_id is None:
            return
        from drill.labs.controller import score_outcome

        took = result["duration_s"] or time.monotonic() - self._started
        try:
            self.history.finish(self.run_id, score_outcome(None, result, None), took)
        except HISTORY_ERRORS as error:
            self._failed("the end of this run is not recorded", error)
        self.run_id = None

    def abandon(self) -> None:
        """The run ended without a result (interrupted, or an error before the lab ran)."""
        if self.history is None or self.run_id is None:
            return
        try:
            self.history.close_interrupted(running_ids=set())
        except HISTORY_ERRORS as error:
            self._failed("the end of this run is not recorded", error)
        self.run_id = None

    def close(self) -> None:
        self.abandon()
        if self.db is not None:
            self.db.close()
            self.db = None
