"""`drill verify --world-size N`: cards that pin no world size run at N, and their claims must
hold at W=2 and W=3 (the static half, over every bundled card, is in tests/decks/
test_claim_strength.py)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from drill.decks import links
from drill.decks.loader import load_decks
from drill.decks.models import Card
from drill.labs.verify import LabJob, LinkedCard, ResultCache, linked_cards, plan_jobs, run_verify
from tests.support.run_log import cache_db
from trainer_lab.result import LabResult, new_result


def _linked(card_id: str, lab: dict[str, Any]) -> LinkedCard:
    data = {"id": card_id, "level": "easy", "front": "q", "back": "a", "lab": lab}
    return LinkedCard("deck", Card.model_validate(data))


def test_world_size_replaces_the_labs_default_only_where_the_card_pins_none(
    tmp_path: Path,
) -> None:
    free = _linked("free", {"run": "sampler", "expect": ["world == 3"]})
    pinned = _linked("pinned", {"run": "sampler", "world_size": 2, "expect": ["world == 2"]})
    assert [job.world_size for job in plan_jobs([free, pinned], 3)] == [3, 2]
    assert [job.world_size for job in plan_jobs([free, pinned])] == [None, 2]

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> LabResult:
        made = new_result(job.lab, {}, job.world_size or 0, out_dir)
        made["status"], made["observations"] = "ok", {"world": job.world_size}
        return made

    cache = ResultCache(cache_db(tmp_path / "cache"), "v")
    report = run_verify([free, pinned], run_job, cache, tmp_path / "runs", world_size=3)
    # each card is held against the run at its own world size
    assert [(row.card_id, row.passed) for row in report.rows] == [("free", True), ("pinned", True)]


def test_the_cli_runs_unpinned_cards_at_the_world_size_and_refuses_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from drill.cli.main import main
    from drill.database import open_app_database
    from drill.labs.verify import code_version

    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "d.yaml").write_text(
        "deck: d\ntitle: D\ncards:\n  - id: c1\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: throughput-mfu, expect: ['attention_share < 0.3']}\n"
    )
    # the W=3 run is in the cache: verify at --world-size 3 reads it instead of running
    at_three = new_result("throughput-mfu", {}, 3, tmp_path / "run")
    at_three["status"], at_three["observations"] = "ok", {"attention_share": 0.1}
    job = LabJob("throughput-mfu", (), 3)
    ResultCache(open_app_database(), code_version()).put(job, at_three, tmp_path / "run")
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--decks", str(decks), "verify", "--deck", "d", "--world-size", "3"]) == 0
    assert "1 lab run(s) (1 cached)" in capsys.readouterr().out
    for bad in ("0", "65", "two"):
        with pytest.raises(SystemExit) as exit_:
            main(["verify", "--world-size", bad])
        assert exit_.value.code == 2
    assert "argument --world-size" in capsys.readouterr().err


# Quick labs whose cards pin no world size, among them the claims issue 27 found holding at W=2
# only (the sampler's padding, the straggler's rank).
QUICK = ("sampler", "sparse-rows", "map-straggler", "cheat-metrics")


@pytest.mark.lab
@pytest.mark.parametrize("world_size", [2, 3])
def test_unpinned_bundled_cards_of_quick_labs_hold_at_two_and_three_ranks(
    tmp_path: Path, world_size: int
) -> None:
    from drill.cli.verify import _run_job

    cards = [
        linked
        for linked in linked_cards(load_decks(None, link_checks=links.LAB_LINK_CHECKS))
        if linked.card.lab is not None
        and linked.card.lab.world_size is None
        and (linked.card.lab.run in QUICK or linked.card.id in QUICK)
    ]
    assert len(cards) >= 5

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: threading.Event) -> LabResult:
        return _run_job(job, out_dir, lambda raw: None, cancel)

    cache = ResultCache(cache_db(tmp_path / "cache"), "v")
    report = run_verify(cards, run_job, cache, tmp_path / "runs", world_size=world_size, budget=2)
    assert {outcome.result["world_size"] for outcome in report.jobs} == {world_size}
    assert [f"{r.card_id}: {r.claim}: {r.observed} {r.detail}" for r in report.failures] == []
