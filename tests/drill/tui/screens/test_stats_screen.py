"""`S` on the home screen opens the stats; they are computed from the app's own database."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Static

from drill.settings import load_settings
from drill.tui.screens.browser_dialogs import ConfirmScreen
from drill.tui.screens.home import HomeScreen
from drill.tui.screens.stats import StatsScreen
from tests.support.clocks import TUI_START as START
from tests.support.pilot import run_async, text_of, until
from tests.support.review_logs import LogBuilder
from tests.support.synthetic_reviews import synthetic_reviews, write_review_log

SIZE = (100, 32)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def summary(pilot) -> str:  # type: ignore[no-untyped-def]
    return text_of(pilot, "#stats-summary")


@run_async
async def test_first_day_user_sees_empty_stats(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, StatsScreen))
        await until(pilot, lambda: "Cards: new 5" in summary(pilot))
        assert "streak 0 days" in summary(pilot) and "True retention –" in summary(pilot)
        await until(pilot, lambda: bool(app.screen.query(".stats-note")))  # no plots: a line
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))


@run_async
async def test_stats_show_the_review_history(make_app, home: Path) -> None:  # type: ignore[no-untyped-def]
    log = LogBuilder(home / "drill.sqlite3")
    log.card("a1", "alpha", due=START + timedelta(days=3), interval_days=30)
    log.card("b1", "beta", state=1, due=START - timedelta(hours=1), interval_days=0.1)
    for days_ago in (0, 1):
        log.review("a1", "alpha", START - timedelta(days=days_ago, hours=1), 3, 30.0)
    log.review("a1", "alpha", START - timedelta(days=2, hours=1), 1, 25.0)
    log.write()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        await until(pilot, lambda: "Today 1 review · " in summary(pilot))
        text = summary(pilot)
        assert "streak 3 days" in text and "3 reviews in all" in text
        assert "new 3 · learning 1 · young 0 · mature 1" in text
        assert "True retention 66.7% (desired 90%) over 3 mature reviews" in text
        assert "due today 1" in text
        screen = app.screen
        await until(pilot, lambda: bool(screen.query("#plot-forecast")))
        assert screen.query("#plot-retention")
        stats = screen.stats  # type: ignore[attr-defined]
        assert stats is not None and stats.retention_by_deck["alpha"].reviews == 3
        await pilot.press("r")  # refresh: the figures are drawn again, once
        await until(pilot, lambda: screen.stats is not stats)  # type: ignore[attr-defined]
        await until(pilot, lambda: len(screen.query("#plot-forecast")) == 1)
        assert "Today 1 review · " in summary(pilot)


@run_async
async def test_unreadable_database_gives_a_line_not_a_crash(tmp_path: Path) -> None:
    from tests.support.pilot import HostApp

    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"not a database" * 200)

    def load():  # type: ignore[no-untyped-def]
        from drill.review.stats import compute_stats

        return compute_stats(bad, [], START)

    app = HostApp(StatsScreen(load))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "cannot read the database" in summary(pilot).lower())


def optimize_line(pilot) -> str:  # type: ignore[no-untyped-def]
    return text_of(pilot, "#stats-optimize")


def confirm_mounted(app):  # type: ignore[no-untyped-def]
    """The confirm dialog is the screen and its question is composed (keys reach it)."""
    return lambda: (
        isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-question"))
    )


@run_async
async def test_o_fits_in_a_subprocess_and_asks_before_adopting(make_app, home: Path) -> None:  # type: ignore[no-untyped-def]
    write_review_log(home / "drill.sqlite3", synthetic_reviews(1200))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        await until(pilot, lambda: "reviews in all" in summary(pilot))
        await pilot.press("o")
        await until(pilot, confirm_mounted(app))
        question = str(app.screen.query_one("#confirm-question", Static).render())
        assert "log loss" in question and "with the fitted ones" in question
        await pilot.press("n")  # declined: nothing written
        await until(pilot, lambda: "Not adopted" in optimize_line(pilot))
        assert load_settings().fsrs_parameters is None
        await pilot.press("o")
        await until(pilot, confirm_mounted(app))
        await pilot.press("y")
        await until(pilot, lambda: "Adopted" in optimize_line(pilot))
        fitted = load_settings().fsrs_parameters
        assert fitted is not None and len(fitted) == 21
        assert app.services.settings.fsrs_parameters == fitted  # new sessions schedule with them


@run_async
async def test_o_with_too_few_reviews_says_how_many_are_needed(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        await until(pilot, lambda: "reviews in all" in summary(pilot))
        await pilot.press("o")
        await until(pilot, lambda: "Not yet: not enough reviews" in optimize_line(pilot))
        assert isinstance(app.screen, StatsScreen)


def mock_rounds_text(screen) -> str:  # type: ignore[no-untyped-def]
    """The "Mock rounds" table as the screen draws it (it sits below the fold)."""
    import io

    from rich.console import Console
    from rich.table import Table

    for block in screen.query(".stats-block").results(Static):
        table = block.content
        if isinstance(table, Table) and str(table.title) == "Mock rounds":
            sink = io.StringIO()
            Console(file=sink, width=100, color_system=None).print(table)
            return sink.getvalue()
    raise AssertionError("no Mock rounds table")


@run_async
async def test_mock_rounds_list_coding_and_notebook_rounds_with_talk_rounds(
    make_app, home: Path
) -> None:  # type: ignore[no-untyped-def]
    from tests.support.mock_rounds import coding_rounds

    coding_rounds()  # #1 coding, finished, 2/3 checks hold; #2 notebook, unfinished
    log = LogBuilder(home / "drill.sqlite3")
    log.mock(datetime.now(UTC) - timedelta(days=30), "standard", 0.7, "solid")
    log.write()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        await until(pilot, lambda: bool(app.screen.query(".stats-block")))
        text = mock_rounds_text(app.screen)
    assert "no rounds yet" not in text
    lines = [line.replace("│", " ") for line in text.splitlines()]
    rows = [line.split() for line in lines if "#" in line or "standard" in line]
    # oldest first: the talk round a month ago, then the two rounds set up just now
    assert [row[1:] for row in rows] == [
        ["standard", "70%", "solid"],
        ["coding", "#1", "2/3", "checks", "hold"],
        ["notebook", "#2", "not", "graded,", "unfinished"],
    ]
