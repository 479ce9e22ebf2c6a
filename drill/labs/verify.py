"""`drill verify`: run every distinct linked lab once and hold each card's claims against it.

Domain only (no printing): the CLI in drill/cli/verify.py renders progress and the table.
Lab results are cached by (lab, params, world size, code version) so a second run is quick.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trainer_lab
from drill.claims.grammar import evaluate, out_of_scope
from drill.decks.loader import DeckSet
from drill.decks.models import Card
from drill.labs.schedule import Planned, default_budget, run_scheduled
from drill.paths import new_run_dir
from trainer_lab.catalogue import get_lab, resolve_world_size
from trainer_lab.catalogue_types import ParamError
from trainer_lab.result import (
    LabResult,
    ResultFormatError,
    ended_result,
    error_message,
    load_result_file,
)

# run_job(job, out_dir, on_progress, cancel): runs in a worker thread; must honour cancel.
RunLab = Callable[["LabJob", Path, Callable[[dict[str, Any]], None], threading.Event], LabResult]


@dataclass(frozen=True)
class LabJob:
    lab: str
    params: tuple[tuple[str, Any], ...]
    world_size: int | None

    @classmethod
    def of(cls, card: Card) -> LabJob:
        assert card.lab is not None
        return cls(card.lab.run, tuple(sorted(card.lab.params.items())), card.lab.world_size)

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
    deckset: DeckSet, deck_id: str | None = None, card_id: str | None = None
) -> list[LinkedCard]:
    """Cards with a lab block, optionally one deck's or one card."""
    return [
        LinkedCard(loaded.deck.deck, card)
        for loaded in deckset.decks
        if deck_id is None or loaded.deck.deck == deck_id
        for card in loaded.deck.cards
        if card.lab is not None and (card_id is None or card.id == card_id)
    ]


def plan_jobs(cards: Iterable[LinkedCard]) -> list[LabJob]:
    """Distinct (lab, params, world size), in first-seen order."""
    return list(dict.fromkeys(LabJob.of(linked.card) for linked in cards))


class ResultCache:
    """One JSON file per job key under `directory`: a copy of the job's result.json, read back
    through the result contract (a damaged or foreign entry is a miss, never a crash)."""

    def __init__(self, directory: Path, version: str) -> None:
        self.directory = directory
        self.version = version
        self._lock = threading.Lock()

    def _path(self, job: LabJob) -> Path:
        return self.directory / f"{job.cache_key(self.version)}.json"

    def get(self, job: LabJob) -> LabResult | None:
        try:
            return load_result_file(self._path(job))
        except ResultFormatError:
            return None

    def _durations_path(self) -> Path:
        return self.directory / "durations.json"

    def _durations(self) -> dict[str, float]:
        try:
            data = json.loads(self._durations_path().read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: float(v)
            for k, v in data.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e6
        }

    def duration(self, job: LabJob) -> float | None:
        """The last measured run time of this job under any code version (an estimate)."""
        return self._durations().get(job.cache_key(""))

    def record_duration(self, job: LabJob, seconds: float) -> None:
        """Best effort (an estimate only): concurrent runs finish in worker threads."""
        with self._lock:
            durations = self._durations()
            durations[job.cache_key("")] = round(seconds, 2)
            tmp = self._durations_path().with_suffix(f".{os.getpid()}.tmp")
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps(durations))
                tmp.replace(self._durations_path())
            except OSError:
                pass

    def put(self, job: LabJob, result: LabResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(job)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(path)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def evaluate_card(linked: LinkedCard, result: LabResult) -> list[Row]:
    """Rows for one card: a row for the lab's own status, each expect claim, and the predict."""
    card, lab = linked.card, linked.card.lab
    assert lab is not None
    status = result["status"]
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


def job_cores(job: LabJob) -> int:
    """A W-rank run costs W cores (the lab's default world size when the card names none)."""
    try:
        return resolve_world_size(get_lab(job.lab), job.world_size)
    except (KeyError, ValueError):
        return job.world_size or 1


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
        started = time.monotonic()
        result = run_job(
            job, out_dir, lambda event: on_progress and on_progress(job, event), cancel_event
        )
        duration = time.monotonic() - started
        if result["status"] in ("ok", "failed"):
            with contextlib.suppress(OSError):  # an unwritable cache costs a rerun, not this
                cache.put(job, result)
            cache.record_duration(job, duration)
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
    **scheduling: Any,  # run_jobs' keywords: fresh, budget, cores_of, cancel, on_*
) -> VerifyReport:
    """Run (or reuse) each distinct lab once, then evaluate every card against its result.

    Rows and jobs come in card / first-seen order whatever order the runs finished in."""
    jobs = plan_jobs(cards)
    outcomes = run_jobs(
        jobs,
        run_job,
        cache,
        runs_dir,
        **scheduling,
    )
    report = VerifyReport(jobs=[outcomes[job] for job in jobs])
    for linked in cards:
        report.rows.extend(evaluate_card(linked, outcomes[LabJob.of(linked.card)].result))
    return report
