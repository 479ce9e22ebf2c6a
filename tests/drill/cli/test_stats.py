"""`drill stats [--json]` as the user runs it: a first-day user and a known history."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.paths import database_path
from tests.support.clocks import pin_cli_clock
from tests.support.review_logs import LogBuilder, write_browse_decks


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> datetime:
    return pin_cli_clock(monkeypatch)


def run(argv: list[str]) -> int:
    return main(argv)


def test_json_on_an_empty_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decks = write_browse_decks(tmp_path / "decks")
    assert run(["stats", "--json", "--decks", str(decks)]) == 0
    data = json.loads(capsys.readouterr().out)
    bundled_and_mine = data["counts"]["new"]
    assert bundled_and_mine >= 5 and data["streak"] == 0 and data["reviews_total"] == 0
    assert data["retention"] == {"reviews": 0, "again": 0, "rate": None}
    assert len(data["forecast"]) == 30 and data["mock_results"] == []
    assert database_path().exists()  # created and migrated on the way


def test_text_and_json_agree_on_a_history(
    capsys: pytest.CaptureFixture[str], now: datetime
) -> None:
    log = LogBuilder(database_path())
    for i in range(4):
        log.review("fsdp-shard", "infra", now - timedelta(days=i), 1 if i == 0 else 3, 30.0)
    log.exercise(now - timedelta(hours=1), "ddp-by-hand", "ok", 5, 5)
    log.write()
    assert run(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["streak"] == 4 and data["reviews_today"] == 1
    assert data["retention_by_deck"]["infra"] == {"reviews": 4, "again": 1, "rate": 0.75}
    assert run(["stats"]) == 0
    out = capsys.readouterr().out
    assert "streak 4 days" in out and "true retention 75.0% (desired 90%)" in out
    assert "infra" in out and "lab predictions right by certainty: low -" in out
    assert data["exercises_solved"] == ["ddp-by-hand"]
    assert "ddp-by-hand: 5/5 checks, solved" in out and "exercises solved: 1" in out


def test_text_says_one_review_and_one_day_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], now: datetime
) -> None:
    decks = write_browse_decks(tmp_path / "decks")
    log = LogBuilder(database_path())
    log.card("fsdp-shard", "infra", due=now + timedelta(days=30), interval_days=30, lapses=1)
    log.review("fsdp-shard", "infra", now, 1, 30.0)
    log.write()
    assert run(["stats", "--decks", str(decks)]) == 0
    out = capsys.readouterr().out
    assert "today 1 review · streak 1 day · 1 review in all" in out
    assert "over 1 mature review\n" in out and "of 1 mature review\n" in out
    assert "weakest decks: infra (1 lapse)" in out
    assert "1 reviews" not in out and "1 lapses" not in out


def test_json_lists_talk_rounds_and_coding_rounds_side_by_side(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.support.mock_rounds import coding_rounds

    coding_rounds()
    log = LogBuilder(database_path())
    log.mock(datetime.now(UTC) - timedelta(days=2), "quick", 0.9, "strong")
    log.write()
    assert run(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(m["round"], m["score"]) for m in data["mock_results"]] == [("quick", 0.9)]
    assert [(r["id"], r["kind"], r["finished"], r["checks_held"], r["checks"])
            for r in data["coding_rounds"]] == [
        (2, "notebook", False, None, None), (1, "coding", True, 2, 3)]  # fmt: skip
