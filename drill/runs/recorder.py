"""The one recorder of graded runs: labs (TUI and `drill lab run`), exercise checks, coding-round
gradings and `drill verify` jobs all write the run log through RunRecorder, with one lifecycle:

    recorder = RunRecorder("lab", db=db)          # or open_db=...: the database opens on start()
    recorder.start(name, params, world_size, run_dir)     # a `running` row, owned by this process
    recorder.finish_result(result)          # status ok | failed | error | timeout | cancelled
    recorder.close()                                      # no end recorded: closed as cancelled

The log is a convenience next to the run itself: a database that cannot be opened or written
never stops the run. Each call returns None, or the notice that says what was not recorded (as
drill.guarded_db words it), and passes a one-line account to `notify` when one is given.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from drill import guarded_db
from drill.guarded_db import Done
from drill.runs.log import ENDED_BY_EXIT, summarize_result
from drill.times import utc_now
from storage.errors import one_line

if TYPE_CHECKING:
    from storage.db import Database
    from trainer_lab.result import LabResult

T = TypeVar("T")
HISTORY_ERRORS = (OSError, LookupError, ValueError)  # besides storage errors (drill.guarded_db)
HISTORY_NAMES = {"exercise": "exercise history", "verify": "run log"}  # else "lab history"


def _open_app_database() -> Database:
    from drill.database import open_app_database

    return open_app_database()


def start_run(
    db: Database,
    kind: str,
    name: str,
    params: Mapping[str, Any],
    world_size: int,
    run_dir: Path | str,
    started_at: datetime,
    **details: Any,  # card_id, deck_id, predicted, certainty, version
) -> int:
    """Write the `running` row of a run owned by this process; returns its id."""
    return db.runs.start(
        kind, name, params, world_size, str(run_dir), started_at, pid=os.getpid(), **details
    )


def finish_run(
    db: Database,
    run_id: int,
    status: str,
    duration_s: float | None,
    summary: Mapping[str, Any],
    *,
    at: datetime | None = None,
    prediction_right: bool | None = None,
    suggested_rating: int | None = None,
) -> None:
    """Record the end of a run (its checks come from the summary's counts)."""
    from storage.runs import RunEnd

    passed, total = summary.get("checks_passed"), summary.get("checks_total")
    end = RunEnd(
        status, at or utc_now(), duration_s, summary,
        None if passed is None else int(passed), None if total is None else int(total),
        prediction_right, suggested_rating,
    )  # fmt: skip
    db.runs.finish(run_id, end)


class RunRecorder:
    """start() before the run, then finish()/finish_result() or abandon(); close() at the end."""

    def __init__(
        self,
        kind: str,
        *,
        db: Database | None = None,
        open_db: Callable[[], Database] | None = _open_app_database,
        notify: Callable[[str], None] | None = None,
        now: Callable[[], datetime] = utc_now,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kind = kind
        self.db = db
        self.open_db = None if db is not None else open_db
        self.notify = notify
        self.now = now
        self.clock = clock
        self.run_id: int | None = None
        self.run_dir: Path | None = None
        self._opened = False
        self._started = clock()

    @property
    def history_name(self) -> str:
        return HISTORY_NAMES.get(self.kind, "lab history")

    def _write(self, what: str, call: Callable[[], T]) -> Done[T]:
        try:
            done = guarded_db.write(call)
        except HISTORY_ERRORS as error:
            done = Done(
                None, guarded_db.NOT_SAVED.format(detail=one_line(error).rstrip(".")), error
            )
        if not done.ok:
            self.run_id = None
            if self.notify is not None:
                detail = one_line(done.error) if done.error is not None else done.notice
                self.notify(f"{what} in the {self.history_name}: {detail}")
        return done

    def start(
        self,
        name: str,
        params: Mapping[str, Any],
        world_size: int,
        run_dir: Path | str,
        started_at: datetime | None = None,
        **details: Any,  # card_id, deck_id, predicted, certainty, version
    ) -> str | None:
        """Write the `running` row (opening the database first when given open_db)."""
        self._started = self.clock()
        self.run_dir = Path(run_dir)
        started = started_at or self.now()

        def write() -> int:
            if self.db is None and self.open_db is not None:
                self.db = self.open_db()
                self._opened = True
            if self.db is None:
                raise LookupError("no database")
            return start_run(self.db, self.kind, name, params, world_size, run_dir, started,
                             **details)  # fmt: skip

        done = self._write("this run is not recorded", write)
        self.run_id = done.value
        return done.notice

    def finish(
        self,
        status: str,
        summary: Mapping[str, Any],
        duration_s: float | None = None,
        *,
        prediction_right: bool | None = None,
        suggested_rating: int | None = None,
    ) -> str | None:
        """Record the end (`duration_s` None: the time since start())."""
        db, run_id = self.db, self.run_id
        if db is None or run_id is None:
            return None
        took = duration_s if duration_s is not None else self.clock() - self._started
        done = self._write(
            "the end of this run is not recorded",
            lambda: finish_run(db, run_id, status, took, summary, at=self.now(),
                               prediction_right=prediction_right,
                               suggested_rating=suggested_rating),
        )  # fmt: skip
        self.run_id = None
        if done.ok:
            self._prune()
        return done.notice

    def _prune(self) -> None:
        """Keep the last runs of this run's kind (drill.runs.retention); a folder that cannot
        be removed stays, and never fails the run."""
        from drill.runs import retention
        from storage.errors import DatabaseError

        if self.db is None or self.run_dir is None or retention.kept_per_kind() <= 0:
            return
        try:
            retention.after_run(self.run_dir, self.db.runs.retained_dirs())
        except (OSError, DatabaseError):
            return

    def finish_result(
        self, result: LabResult, duration_s: float | None = None, **extra: Any
    ) -> str | None:
        """finish() from a result of the contract (trainer_lab.result), taking its duration
        unless `duration_s` is given; `extra` joins the summary (e.g. claims)."""
        extra.setdefault("error", _error_of(result))
        took = duration_s if duration_s is not None else result.get("duration_s") or None
        return self.finish(result["status"], summarize_result(result, **extra), took)

    def record(self, result: LabResult, run_dir: Path | str, **extra: Any) -> str | None:
        """A run that already ended, in one call: start, finish with `result`, close."""
        try:
            started = self.start(result["lab"], result["params"], result["world_size"], run_dir)
            return started or self.finish_result(result, **extra)
        finally:
            self.close()

    def abandon(self) -> str | None:
        """The run ended without a result (interrupted, or an error before it ran)."""
        return self.finish("cancelled", ENDED_BY_EXIT)

    def close(self) -> None:
        """Abandon a run whose end was not recorded; close a database opened here."""
        self.abandon()
        if self._opened and self.db is not None:
            self.db.close()
            self.db = None
            self._opened = False


def _error_of(result: LabResult) -> str | None:
    from trainer_lab.result import error_message

    try:
        return error_message(result) or None
    except (KeyError, TypeError, AttributeError):  # a partial result (a fake runner's)
        return None
