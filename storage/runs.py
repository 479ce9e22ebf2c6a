"""The run-log repository (table run_log, storage/run_tables.py): every graded run, whatever ran
it, with one lifecycle: start() writes a `running` row, finish() its end, close_running() the
rows whose process is gone. Each method is one short transaction, committed before it returns.

Rows come back as RunEntry with plain values (params and summary decoded, datetimes aware UTC);
garbage stored in a column raises DatabaseError, never something else.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from storage.errors import MissingRow
from storage.run_tables import RunLogRow
from storage.schema_names import RUN_KINDS, RUNNING

if TYPE_CHECKING:
    from storage.db import Database


@dataclass(frozen=True)
class RunEntry:
    id: int
    kind: str
    name: str
    params: dict[str, Any]
    world_size: int
    card_id: str | None
    deck_id: str | None
    started_at: datetime
    finished_at: datetime | None
    duration_s: float | None
    status: str
    checks_passed: int | None
    checks_total: int | None
    summary: dict[str, Any]
    run_dir: str
    version: str | None
    pid: int | None
    predicted: str | None
    certainty: str | None
    prediction_right: bool | None
    suggested_rating: int | None
    rating: int | None


@dataclass(frozen=True)
class RunEnd:
    """How a run ended: what finish() writes."""

    status: str
    finished_at: datetime
    duration_s: float | None
    summary: Mapping[str, Any]
    checks_passed: int | None = None
    checks_total: int | None = None
    prediction_right: bool | None = None
    suggested_rating: int | None = None


def params_json(params: Mapping[str, Any]) -> str:
    """The stored form of params: sorted keys, so equal params compare equal as text."""
    return json.dumps(dict(params), sort_keys=True, default=str)


def _object(text: str | None) -> dict[str, Any]:
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError(f"a JSON object was expected, not {type(value).__name__}")
    return value


def _entry(row: RunLogRow) -> RunEntry:
    from storage.db import from_db_time

    started = from_db_time(row.started_at)
    if row.id is None or started is None:
        raise ValueError("a run_log row without an id or start time")
    return RunEntry(
        id=row.id,
        kind=str(row.kind),
        name=str(row.name),
        params=_object(row.params_json),
        world_size=int(row.world_size or 0),
        card_id=row.card_id,
        deck_id=row.deck_id,
        started_at=started,
        finished_at=from_db_time(row.finished_at),
        duration_s=None if row.duration_s is None else float(row.duration_s),
        status=str(row.status),
        checks_passed=None if row.checks_passed is None else int(row.checks_passed),
        checks_total=None if row.checks_total is None else int(row.checks_total),
        summary=_object(row.summary_json),
        run_dir=str(row.run_dir),
        version=row.version,
        pid=None if row.pid is None else int(row.pid),
        predicted=row.predicted,
        certainty=row.certainty,
        prediction_right=row.prediction_right,
        suggested_rating=row.suggested_rating,
        rating=row.rating,
    )


class RunRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def start(
        self,
        kind: str,
        name: str,
        params: Mapping[str, Any],
        world_size: int,
        run_dir: str,
        started_at: datetime,
        *,
        pid: int | None = None,
        card_id: str | None = None,
        deck_id: str | None = None,
        predicted: str | None = None,
        certainty: str | None = None,
        version: str | None = None,
    ) -> int:
        """Write a `running` row; returns its id."""
        from storage.db import to_db_time

        if kind not in RUN_KINDS:
            raise ValueError(f"unknown run kind {kind!r} (one of {', '.join(RUN_KINDS)})")
        row = RunLogRow(
            kind=kind,
            name=name,
            params_json=params_json(params),
            world_size=world_size,
            card_id=card_id,
            deck_id=deck_id,
            started_at=to_db_time(started_at),  # type: ignore[arg-type]
            status=RUNNING,
            run_dir=run_dir,
            version=version,
            pid=pid,
            predicted=predicted,
            certainty=certainty,
        )
        with self.db.unit() as session:
            session.add(row)
            session.flush()
            assert row.id is not None
            return row.id

    def finish(self, run_id: int, end: RunEnd) -> None:
        """Record how the run ended; MissingRow when there is no such run."""
        from storage.db import to_db_time

        with self.db.unit() as session:
            row = session.get(RunLogRow, run_id)
            if row is None:
                raise MissingRow(f"no run {run_id} in the run log")
            row.status = end.status
            row.finished_at = to_db_time(end.finished_at)
            row.duration_s = None if end.duration_s is None else round(end.duration_s, 3)
            row.summary_json = json.dumps(dict(end.summary), default=str)
            row.checks_passed = end.checks_passed
            row.checks_total = end.checks_total
            row.prediction_right = end.prediction_right
            row.suggested_rating = end.suggested_rating
            session.add(row)

    def set_rating(self, run_id: int, rating: int) -> None:
        with self.db.unit() as session:
            row = session.get(RunLogRow, run_id)
            if row is None:
                raise MissingRow(f"no run {run_id} in the run log")
            row.rating = rating
            session.add(row)

    def get(self, run_id: int) -> RunEntry | None:
        with self.db.unit() as session:
            row = session.get(RunLogRow, run_id)
            return None if row is None else _entry(row)

    def find(
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
    ) -> list[RunEntry]:
        """Runs matching every filter given, newest first."""
        query = select(RunLogRow).order_by(col(RunLogRow.id).desc()).limit(limit)
        if kinds is not None:
            query = query.where(col(RunLogRow.kind).in_(list(kinds)))
        if name is not None:
            query = query.where(RunLogRow.name == name)
        if card_id is not None:
            query = query.where(RunLogRow.card_id == card_id)
        if params is not None:
            query = query.where(RunLogRow.params_json == params_json(params))
        if world_size is not None:
            query = query.where(RunLogRow.world_size == world_size)
        if version is not None:
            query = query.where(RunLogRow.version == version)
        if statuses is not None:
            query = query.where(col(RunLogRow.status).in_(list(statuses)))
        with self.db.unit() as session:
            return [_entry(row) for row in session.exec(query)]

    def retained_dirs(self) -> set[str]:
        """The run folders the log still needs: every `running` row's, and for each (kind,
        name, params, world size, version) the newest row's of each status (what the Labs
        screen reopens and verify's cache reads)."""
        columns = (RunLogRow.kind, RunLogRow.name, RunLogRow.params_json, RunLogRow.world_size,
                   RunLogRow.version, RunLogRow.status, RunLogRow.run_dir)  # fmt: skip
        with self.db.unit() as session:
            rows = session.exec(select(*columns).order_by(col(RunLogRow.id).desc())).all()
        kept: set[str] = set()
        seen: set[tuple] = set()  # type: ignore[type-arg]
        for *key, run_dir in rows:
            if key[-1] == RUNNING or tuple(key) not in seen:
                kept.add(run_dir)
            seen.add(tuple(key))
        return {run_dir for run_dir in kept if run_dir}

    def running(self) -> list[tuple[int, int | None]]:
        """(id, owning pid) of every row still `running`."""
        with self.db.unit() as session:
            rows = session.exec(
                select(RunLogRow.id, RunLogRow.pid).where(RunLogRow.status == RUNNING)
            ).all()
        return [(int(run_id), None if pid is None else int(pid)) for run_id, pid in rows]

    def close_running(
        self, run_ids: Collection[int], status: str, summary: Mapping[str, Any], at: datetime
    ) -> int:
        """End these rows with `status` where they are still `running`; returns how many."""
        from storage.db import to_db_time

        closed = 0
        with self.db.unit() as session:
            for run_id in run_ids:
                row = session.get(RunLogRow, run_id)
                if row is None or row.status != RUNNING:
                    continue
                row.status = status
                row.finished_at = to_db_time(at)
                row.summary_json = json.dumps(dict(summary), default=str)
                session.add(row)
                closed += 1
        return closed
