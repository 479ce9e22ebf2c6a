"""`drill mock rate ID`: the terminal prints a finished coding round's checklist and rates only
with --confirm (issue 37: never silently); --do-not-rate settles it without a rating."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from drill.cli.main import main
from drill.mock.coding.session import default_rounds_dir
from tests.support.coding_reports import played_round

CARD = "map-sampler-state-correctness"  # distributed.exactly_once failed in the played round


def reviewed_long_ago(drill_home) -> None:  # type: ignore[no-untyped-def]
    from drill.review.scheduler import rate_card
    from drill.times import utc_now
    from storage.db import open_database

    db = open_database(drill_home / "drill.sqlite3")
    try:
        rate_card(db, CARD, "interview-map", 3, content_hash=None,
                  now=utc_now() - timedelta(days=60))  # fmt: skip
    finally:
        db.close()


def ratings(drill_home) -> list[int]:  # type: ignore[no-untyped-def]
    with sqlite3.connect(drill_home / "drill.sqlite3") as db:
        rows = db.execute("SELECT rating FROM review_log WHERE card_id = ?", (CARD,))
        return [rating for (rating,) in rows]


def test_rate_prints_the_checklist_and_rates_only_with_confirm(drill_home, capsys):
    played_round(default_rounds_dir())
    assert main(["mock", "rate", "1"]) == 1  # not a terminal, no --confirm: nothing rated
    out = capsys.readouterr().out
    assert "Round 1: the checklist (the matcher's ticks; nothing rated yet):" in out
    assert "  1. Check failed: sample 17 seen twice in epoch 0\n     [ ] 1.1 distributed." in out
    assert f"    {CARD}: Again (a failed check)" in out
    assert "Not rated. Rate as shown: drill mock rate 1 --confirm" in out
    reviewed_long_ago(drill_home)
    assert ratings(drill_home) == [3]

    assert main(["mock", "rate", "1", "--confirm"]) == 0
    out = capsys.readouterr().out
    assert f"Fed back to review:\n  {CARD}: Again, due " in out
    assert ratings(drill_home) == [3, 1]
    assert main(["mock", "rate", "1", "--confirm"]) == 0  # once per round
    assert "no checklist to confirm" in capsys.readouterr().out
    assert ratings(drill_home) == [3, 1]


def test_do_not_rate_closes_the_checklist(drill_home, capsys):
    played_round(default_rounds_dir())
    reviewed_long_ago(drill_home)
    assert main(["mock", "rate", "1", "--do-not-rate"]) == 0
    assert "not rated: you chose not to rate this round" in capsys.readouterr().out
    assert ratings(drill_home) == [3]
    assert main(["mock", "report", "coding", "1", "--md"]) == 0
    assert "- not rated: you chose not to rate this round" in capsys.readouterr().out


def test_a_terminal_is_asked_and_only_y_rates(drill_home, capsys, monkeypatch):
    from drill.cli import mock_rate

    played_round(default_rounds_dir())
    assert main(["mock", "rate", "1", "--do-not-rate"]) == 0  # (the database is made here)
    capsys.readouterr()
    played_round(default_rounds_dir())  # round 2, not settled
    reviewed_long_ago(drill_home)
    monkeypatch.setattr(mock_rate.sys.stdin, "isatty", lambda: True, raising=False)
    said = iter(["", "y"])
    monkeypatch.setattr("builtins.input", lambda question: next(said))
    assert main(["mock", "rate", "2"]) == 1  # Enter: later, nothing rated
    assert ratings(drill_home) == [3]
    assert main(["mock", "rate", "2"]) == 0  # y: rated as shown
    assert ratings(drill_home) == [3, 1]


def test_flipped_items_change_the_rating_that_confirm_gives(drill_home, capsys):
    """The person decides: the failed check's item ticked by hand rates the card by the
    remaining items, and the flip is shown; a flip that names no item changes nothing."""
    played_round(default_rounds_dir())
    reviewed_long_ago(drill_home)
    assert main(["mock", "rate", "1", "--flip", "7.7", "--confirm"]) == 2
    assert "no item 7.7" in capsys.readouterr().err
    assert ratings(drill_home) == [3]

    assert main(["mock", "rate", "1", "--flip", "1.1"]) == 1  # shown, not rated, not kept
    out = capsys.readouterr().out
    assert "the checklist (your flips applied; nothing rated yet)" in out
    assert "     [x] 1.1 distributed." in out and "(flipped)" in out
    assert f"    {CARD}: Again" not in out
    assert ratings(drill_home) == [3]

    assert main(["mock", "rate", "1", "--flip", "1.1", "--confirm"]) == 0
    out = capsys.readouterr().out
    assert CARD not in out  # every item of its entry ticked: the card needs no rating
    assert "llm-resume-after-crash: Again (a failed check)" in out  # the other check still rates
    assert ratings(drill_home) == [3]


def test_a_terminal_flips_with_f_then_rates_with_y(drill_home, capsys, monkeypatch):
    played_round(default_rounds_dir())
    reviewed_long_ago(drill_home)
    typed = iter(["f 1.1 5.5", "y"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))
    assert main(["mock", "rate", "1"]) == 0
    out = capsys.readouterr().out
    assert "Not flipped: the checklist has no item 5.5" in out
    assert "[x] 1.1 distributed.exactly_once held (flipped)" in out
    assert CARD not in out.split("Fed back to review:")[1]
    assert ratings(drill_home) == [3]
