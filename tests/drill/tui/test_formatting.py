from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from drill.review.session import SessionStats
from drill.tui.formatting import (
    back_markdown,
    format_duration,
    format_interval,
    format_next_due,
    rating_label,
)
from drill.tui.screens.summary import summary_lines
from drill.tui.startup import AppOptions, invalid_deck_notice


def test_format_interval_units() -> None:
    cases = {
        timedelta(seconds=20): "<1m",
        timedelta(minutes=10): "10m",
        timedelta(hours=5): "5h",
        timedelta(days=3): "3d",
        timedelta(days=63): "2.1mo",
        timedelta(days=511): "1.4y",
    }
    assert {d: format_interval(d) for d in cases} == cases


def test_next_due_and_duration() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert format_next_due(None, now) == "-"
    assert format_next_due(now - timedelta(hours=1), now) == "now"
    assert format_next_due(now + timedelta(hours=3), now) == "in 3h"
    assert [format_duration(s) for s in (42, 185, 3720)] == ["42s", "3m 05s", "1h 02m"]


def test_rating_label_and_back_with_rubric() -> None:
    assert rating_label(3, timedelta(days=4)) == "3 Good · 4d"
    assert rating_label(1, None) == "1 Again"
    assert back_markdown("Answer.", []) == "Answer."
    assert back_markdown("Answer.\n", ["one", "two"]) == "Answer.\n\n**Rubric**\n\n- one\n- two\n"


def test_summary_lines_and_notice() -> None:
    assert summary_lines(SessionStats(reviewed=3, again=1, elapsed_s=120)) == [
        "Reviewed: 3",
        "Again:    1",
        "Time:     2m 00s",
    ]
    assert summary_lines(SessionStats(0, 0, 5))[0] == "No cards reviewed."
    assert invalid_deck_notice([]) is None
    notice = invalid_deck_notice([Path("x/a.yaml"), Path("b.yml")])
    assert notice is not None and "deck(s): a.yaml, b.yml." in notice


def test_options_from_cli_namespace() -> None:
    import argparse

    options = AppOptions.from_args(argparse.Namespace(decks=["d1", "d2"]))
    assert [str(p) for p in options.deck_dirs] == ["d1", "d2"]
    assert options.start_review is None and options.include_bundled
    assert AppOptions.from_args(None).deck_dirs == []
