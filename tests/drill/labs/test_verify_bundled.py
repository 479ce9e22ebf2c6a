"""`drill verify` over every bundled card: real lab runs, every claim and predict block evaluated.

Slow (every distinct linked lab runs once, as torchrun jobs): marked `lab`. The first pass runs
the labs through the same runner and cache as `drill verify`; the CLI pass then reads the cache.
Run with `-s` to see the cold and cached wall times.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from drill.cli.main import main
from drill.database import open_app_database
from drill.decks import links as lab_links
from drill.decks.loader import load_decks
from drill.labs.verify import LabJob, ResultCache, code_version, linked_cards, plan_jobs, run_verify
from drill.paths import runs_dir
from trainer_lab.api import run_lab
from trainer_lab.result import LabResult


def _run_job(job: LabJob, out_dir: Path, progress: Any, cancel: threading.Event) -> LabResult:
    return run_lab(job.lab, dict(job.params), job.world_size, out_dir, None, cancel=cancel)


@pytest.mark.lab
def test_verify_runs_every_bundled_claim_and_passes(
    drill_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # keep rich from wrapping the summary line
    deckset = load_decks(link_checks=lab_links.LAB_LINK_CHECKS)
    assert deckset.problems == []
    cards = linked_cards(deckset)
    assert len(cards) >= 30, "expected the bundled decks to link many cards to labs"

    started = time.monotonic()
    cache = ResultCache(open_app_database(), code_version())
    report = run_verify(cards, _run_job, cache, runs_dir() / "verify")
    cold_s = time.monotonic() - started

    assert len(report.jobs) == len(plan_jobs(cards))
    # a lab outside every linked card's `where:` here (oom-debug on a CPU) fails its own
    # runs_on_a_gpu check; its cards' rows are skipped, not failed
    skipped = {row.card_id for row in report.skipped}
    elsewhere = {LabJob.of(c.card).label() for c in cards if c.card.id in skipped}
    statuses = {
        outcome.job.label(): outcome.result["status"]
        for outcome in report.jobs
        if outcome.job.label() not in elsewhere
    }
    assert statuses == dict.fromkeys(statuses, "ok")
    failures = [f"{r.card_id}: {r.claim}: {r.detail}" for r in report.failures]
    assert failures == []

    evaluated: dict[str, list[str]] = {}
    for row in report.rows:
        evaluated.setdefault(row.card_id, []).append(row.claim)
    for linked in cards:
        card = linked.card
        assert card.lab is not None
        wanted = list(card.lab.expect)
        if card.predict is not None:
            wanted.append("predict: one choice holds")
        assert evaluated.get(card.id) == wanted, card.id
        assert wanted, f"{card.id} links a lab but claims nothing"

    capsys.readouterr()
    started = time.monotonic()
    code = main(["verify"])
    cached_s = time.monotonic() - started
    out = capsys.readouterr().out
    assert code == 0, out
    assert (
        f"{len(report.rows)} claim(s) on {len(cards)} card(s), {len(report.jobs)} lab run(s)" in out
    )
    assert "all hold" in out
    # All cached, unless the lab sources changed while the test ran (the cache key is their hash).
    found = re.search(r"\((\d+) cached\)", out)
    cached = found.group(1) if found else "?"
    print(
        f"\nverify: {len(report.rows)} claims on {len(cards)} cards, {len(report.jobs)} lab runs; "
        f"cold {cold_s:.1f} s, CLI rerun {cached_s:.1f} s ({cached} cached)"
    )
