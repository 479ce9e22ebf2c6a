"""`drill verify`: run every distinct linked lab once and hold each card's claims against it.

Domain only (no printing): the CLI in drill/verify_cli.py renders progress and the table.
Lab results are cached by (lab, params, world size, code version) so a second run is quick.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trainer_lab
from drill.claims import evaluate
from drill.deck_loader import DeckSet
from drill.deck_models import Card
from drill.paths import new_run_dir

RunLab = Callable[["LabJob", Path, Callable[[dict[str, Any]], None]], dict[str, Any]]


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


@dataclass
class JobOutcome:
    job: LabJob
    result: dict[str, Any]
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
    """One JSON file per job key under `directory`."""

    def __init__(self, directory: Path, version: str) -> None:
        self.directory = directory
        self.version = version

    def _path(self, job: LabJob) -> Path:
        return self.directory / f"{job.cache_key(self.version)}.json"

    def get(self, job: LabJob) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(job).read_text())
        except (OSError, ValueError):
            return None

    def put(self, job: LabJob, result: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(job)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(path)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def evaluate_card(linked: LinkedCard, result: dict[str, Any]) -> list[Row]:
    """Rows for one card: a row for the lab's own status, each expect claim, and the predict."""
    card, lab = linked.card, linked.card.lab
    assert lab is not None
    status = result.get("status", "error")
    if status != "ok":
        detail = result.get("error") or result.get("detail") or f"lab status {status}"
        return [Row(card.id, lab.run, "lab runs", status, False, str(detail))]
    observations = result.get("observations", {})
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


def run_verify(
    cards: list[LinkedCard],
    run_job: RunLab,
    cache: ResultCache,
    runs_dir: Path,
    *,
    fresh: bool = False,
    on_job: Callable[[int, int, LabJob, bool], None] | None = None,
    on_progress: Callable[[LabJob, dict[str, Any]], None] | None = None,
) -> VerifyReport:
    """Run (or reuse) each distinct lab once, then evaluate every card against its result."""
    report = VerifyReport()
    results: dict[LabJob, dict[str, Any]] = {}
    jobs = plan_jobs(cards)
    for index, job in enumerate(jobs):
        cached = None if fresh else cache.get(job)
        if on_job:
            on_job(index, len(jobs), job, cached is not None)
        started = time.monotonic()
        if cached is None:
            out_dir = new_run_dir(runs_dir, f"{job.lab}-{job.cache_key(cache.version)}")

            def progress(event: dict[str, Any], job: LabJob = job) -> None:
                if on_progress:
                    on_progress(job, event)

            result = run_job(job, out_dir, progress)
            if result.get("status") in ("ok", "failed"):
                cache.put(job, result)
        else:
            result = cached
        results[job] = result
        report.jobs.append(JobOutcome(job, result, cached is not None, time.monotonic() - started))
    for linked in cards:
        report.rows.extend(evaluate_card(linked, results[LabJob.of(linked.card)]))
    return report
