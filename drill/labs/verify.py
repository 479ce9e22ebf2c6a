"""`drill verify`: run every distinct linked lab once and hold each card's claims against it.

Domain only (no printing): the CLI in drill/cli/verify.py renders progress and the table.
Every lab run is recorded in the run log (kind "verify"); a second verify reuses the result of
a run with the same (lab, params, world size, lab source version), so it is quick.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trainer_lab
from drill import guarded_db
from drill.claims.grammar import evaluate, out_of_scope
from drill.decks.loader import DeckSet
from drill.decks.models import Card
from drill.labs.schedule import Planned, default_budget, run_scheduled
from drill.paths import new_run_dir
from drill.runs.log import VERIFY, RunLog, RunRecord
from drill.runs.recorder import RunRecorder
from trainer_lab.catalogue import get_lab, resolve_world_size
from trainer_lab.catalogue_types import ParamError
from trainer_lab.result import (
    RESULT_FILE,
    LabResult,
    ended_result,
    error_message,
    read_result,
    write_result,
)

if TYPE_CHECKING:
    from storage.db import Database

CACHEABLE = ("ok", "failed")  # a run that finished; an error or timeout is retried next time

# run_job(job, out_dir, on_progress, cancel): runs in a worker thread; must honour cancel.
RunLab = Callable[["LabJob", Path, Callable[[dict[str, Any]], None], threading.Event], LabResult]


@dataclass(frozen=True)
class LabJob:
    lab: str
    params: tuple[tuple[str, Any], ...]
    world_size: int | None

    @classmethod
    def of(cls, card: Card, world_size: int | None = None) -> LabJob:
        """The card's run; `world_size` stands in for the lab's default where the card pins
        none (`drill verify --world-size`)."""
        assert card.lab is not None
        world = card.lab.world_size if card.lab.world_size is not None else world_size
        return cls(card.lab.run, tuple(sorted(card.lab.params.items())), world)

    def label(self) -> str:
        params = " ".join(f"{k}={v}" for k, v in self.params)
        world = f" W={self.world_size}" if self.world_size else ""
        return f"{self.lab}{world}{' ' + params if params else ''}"

    def cache_key(self, version: str) -> str:
        payload = json.dumps([self.lab, self.params, self.world_size, version], default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class LinkedCard:
    deck_id: str
    card: Card


@dataclass(frozen=True)
class Row:
    card_id: str
    lab: str
    claim: str
    observed: str
    passed: bool
    detail: str
    skipped: bool = False  # the card's `where:` does not hold on this run (e.g. another device)


@dataclass
class JobOutcome:
    job: LabJob
    result: LabResult
    cached: bool
    duration_s: float


@dataclass
class VerifyReport:
    rows: list[Row] = field(default_factory=list)
    jobs: list[JobOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(row.passed for row in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [row for row in self.rows if not row.passed]

    @property
    def skipped(self) -> list[Row]:
        return [row for row in self.rows if row.skipped]


def code_version() -> str:
    """Hash of the lab sources: a changed lab invalidates cached results."""
    digest = hashlib.sha256()
    root = Path(trainer_lab.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def linked_cards(
    deckset: DeckSet, deck_id: str | None = None, card_ids: Collection[str] | None = None
) -> list[LinkedCard]:
    """Cards with a lab block, optionally one deck's, or only the named cards."""
    return [
        LinkedCard(loaded.deck.deck, card)
        for loaded in deckset.decks
        if deck_id is None or loaded.deck.deck == deck_id
        for card in loaded.deck.cards
        if card.lab is not None and (card_ids is None or card.id in card_ids)
    ]


def plan_jobs(cards: Iterable[LinkedCard], world_size: int | None = None) -> list[LabJob]:
    """Distinct (lab, params, world size), in first-seen order."""
    return list(dict.fromkeys(LabJob.of(linked.card, world_size) for linked in cards))


class ResultCache:
    """Verify's results are its runs in the run log (kind "verify"): a job's cached result is the
    newest ok/failed verify run of the same lab, params, world size and lab source version whose
    run dir still holds a result of the contract (a damaged or foreign one is a miss, never a
    crash). Without a database (None, or one that cannot be read) every job runs."""

    def __init__(self, db: Database | None, version: str) -> None:
        self.db = db
        self.version = version

    def _find(self, job: LabJob, version: str | None, limit: int) -> list[RunRecord]:
        if self.db is None:
            return []
        log = RunLog(self.db)
        done = guarded_db.read(
            lambda: log.runs(
                kinds=(VERIFY,),
                name=job.lab,
                params=dict(job.params),
                world_size=job_world(job),
                version=version,
                statuses=CACHEABLE,
                limit=limit,
            )
        )
        return done.value or []

    def get(self, job: LabJob) -> LabResult | None:
        for record in self._find(job, self.version, limit=3):
            result = read_result(record.run_dir)
            if result is not None and result["status"] in CACHEABLE:
                return result
        return None

    def duration(self, job: LabJob) -> float | None:
        """The last measured run time of this job under any code version (an estimate)."""
        for record in self._find(job, None, limit=1):
            seconds = record.duration_s
            if seconds is not None and 0 <= seconds < 1e6:
                return seconds
        return None

    def start(self, job: LabJob, out_dir: Path) -> RunRecorder:
        """Record a verify run of `job` as started (a database that refuses costs a rerun)."""
        recorder = RunRecorder(VERIFY, db=self.db, open_db=None)
        if self.db is not None:
            recorder.start(job.lab, dict(job.params), job_world(job), out_dir,
                           version=self.version)  # fmt: skip
        return recorder

    def finish(self, recorder: RunRecorder, result: LabResult, out_dir: Path, took: float) -> None:
        """Record the end; a finished result is kept in its run dir (where get() reads it)."""
        if result["status"] in CACHEABLE and not (out_dir / RESULT_FILE).is_file():
            with contextlib.suppress(OSError):  # an unwritable run dir costs a rerun, not this
                write_result(out_dir, result)
        recorder.finish_result(result, duration_s=took)
        recorder.close()

    def put(self, job: LabJob, result: LabResult, out_dir: Path, took: float = 0.0) -> None:
        """Record a finished result of `job` produced elsewhere (e.g. a test's)."""
        self.finish(self.start(job, out_dir), result, out_dir, took)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def evaluate_card(linked: LinkedCard, result: LabResult) -> list[Row]:
    """Rows for one card: a row for the lab's own status, each expect claim, and the predict."""
    card, lab = linked.card, linked.card.lab
    assert lab is not None
    status = result["status"]
    if status == "failed" and out_of_scope(lab.where, result["observations"]) is not None:
        # a lab whose checks need another device (a GPU-only lab on CPU): skipped, not failed
        return claim_rows(linked, result["observations"])
    if status != "ok":
        detail = error_message(result) or f"lab status {status}"
        return [Row(card.id, lab.run, "lab runs", status, False, detail)]
    return claim_rows(linked, result["observations"])


def claim_rows(linked: LinkedCard, observations: dict[str, Any]) -> list[Row]:
    """Each expect claim and the predict block held against these observations; all of them
    skipped (rows that pass, marked skipped) where the card's `where:` does not hold."""
    card, lab = linked.card, linked.card.lab
    assert lab is not None
    scope = out_of_scope(lab.where, observations)
    if scope is not None:
        texts = [*lab.expect, *(["predict: one choice holds"] if card.predict else [])]
        return [Row(card.id, lab.run, text, scope, True, "skipped", True) for text in texts]
    rows: list[Row] = []
    for claim in lab.expect:
        outcome = evaluate(claim, observations)
        observed = ", ".join(f"{k}={_fmt(v)}" for k, v in outcome.observed.items())
        rows.append(Row(card.id, lab.run, claim, observed, outcome.passed, outcome.detail))
    if card.predict is not None:
        holding = [c.text for c in card.predict.choices if evaluate(c.when, observations).passed]
        passed = len(holding) == 1
        detail = "exactly one choice holds" if passed else f"{len(holding)} choices hold"
        observed = " | ".join(holding) or "none"
        rows.append(Row(card.id, lab.run, "predict: one choice holds", observed, passed, detail))
    return rows


def job_world(job: LabJob) -> int:
    """The world size the job runs at (the lab's default when the card names none); 0 when the
    lab is unknown and the card names none."""
    try:
        return resolve_world_size(get_lab(job.lab), job.world_size)
    except (KeyError, ValueError):
        return job.world_size or 0


def job_cores(job: LabJob) -> int:
    """A W-rank run costs W cores."""
    return job_world(job) or 1


def job_estimate(job: LabJob, cache: ResultCache) -> float:
    """The last measured duration, else the lab's timeout (an upper bound)."""
    measured = cache.duration(job)
    if measured is not None:
        return measured
    try:
        return get_lab(job.lab).timeout_s
    except (KeyError, ValueError):
        return 60.0


def run_jobs(
    jobs: list[LabJob],
    run_job: RunLab,
    cache: ResultCache,
    runs_dir: Path,
    *,
    fresh: bool = False,
    budget: int | None = None,
    cores_of: Callable[[LabJob], int] = job_cores,
    cancel: threading.Event | None = None,
    on_start: Callable[[LabJob, float], None] | None = None,
    on_finish: Callable[[JobOutcome], None] | None = None,
    on_progress: Callable[[LabJob, dict[str, Any]], None] | None = None,
) -> dict[LabJob, JobOutcome]:
    """Reuse cached results, run the rest concurrently within `budget` cores, longest first.

    A run that is cancelled or never started reads as a "cancelled" result."""
    outcomes: dict[LabJob, JobOutcome] = {}
    to_run: list[Planned[LabJob]] = []
    for job in jobs:
        cached = None if fresh else cache.get(job)
        if cached is not None:
            outcomes[job] = JobOutcome(job, cached, True, 0.0)
            if on_finish:
                on_finish(outcomes[job])
        else:
            to_run.append(Planned(job, cores_of(job), job_estimate(job, cache)))
    estimates = {p.item: p.estimate_s for p in to_run}

    def run_one(job: LabJob, cancel_event: threading.Event) -> JobOutcome:
        out_dir = new_run_dir(runs_dir, f"{job.lab}-{job.cache_key(cache.version)}")
        recorder = cache.start(job, out_dir)
        started = time.monotonic()
        try:
            result = run_job(
                job, out_dir, lambda event: on_progress and on_progress(job, event), cancel_event
            )
        except BaseException:
            recorder.close()  # no result: the row is closed as cancelled
            raise
        duration = time.monotonic() - started
        cache.finish(recorder, result, out_dir, duration)
        return JobOutcome(job, result, False, duration)

    def failed(job: LabJob, error: BaseException) -> JobOutcome:
        message = f"verify could not run the lab: {type(error).__name__}: {error}"
        if isinstance(error, ParamError):
            message = str(error)
        result = ended_result(
            job.lab, dict(job.params), job.world_size or 0, runs_dir, "error", message, 0.0
        )
        return JobOutcome(job, result, False, 0.0)

    def finished(job: LabJob, outcome: JobOutcome) -> None:
        outcomes[job] = outcome
        if on_finish:
            on_finish(outcome)

    run_scheduled(
        to_run,
        run_one,
        budget if budget is not None else default_budget(),
        on_error=failed,
        cancel=cancel,
        on_start=(lambda job: on_start(job, estimates[job])) if on_start else None,
        on_finish=finished,
    )
    for planned in to_run:
        if planned.item not in outcomes:
            job = planned.item
            result = ended_result(
                job.lab,
                dict(job.params),
                job.world_size or 0,
                runs_dir,
                "cancelled",
                "not started: verify was cancelled",
                0.0,
            )
            outcomes[job] = JobOutcome(job, result, False, 0.0)
    return outcomes


def run_verify(
    cards: list[LinkedCard],
    run_job: RunLab,
    cache: ResultCache,
    runs_dir: Path,
    world_size: int | None = None,
    **scheduling: Any,  # run_jobs' keywords: fresh, budget, cores_of, cancel, on_*
) -> VerifyReport:
    """Run (or reuse) each distinct lab once, then evaluate every card against its result;
    cards that pin no world size run at `world_size` when given, else at their lab's default.

    Rows and jobs come in card / first-seen order whatever order the runs finished in."""
    jobs = plan_jobs(cards, world_size)
    outcomes = run_jobs(
        jobs,
        run_job,
        cache,
        runs_dir,
        **scheduling,
    )
    report = VerifyReport(jobs=[outcomes[job] for job in jobs])
    for linked in cards:
        job = LabJob.of(linked.card, world_size)
        report.rows.extend(evaluate_card(linked, outcomes[job].result))
    return report
