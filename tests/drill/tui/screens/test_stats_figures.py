"""The stats figures as drawn: singular counts, whole-number forecast ticks, and a calibration
table that fits an 80-column terminal."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from textual_plotext import PlotextPlot

from drill.review.stats import CardInfo, Stats, compute_stats
from drill.tui.screens.stats import StatsScreen
from drill.tui.screens.stats_figures import calibration_table, count_ticks, summary_text
from tests.support.pilot import HostApp, run_async, until
from tests.support.review_logs import LogBuilder

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def one_review(tmp_path: Path) -> Stats:
    """One mature card reviewed once today, due again tomorrow."""
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("c1", "infra", due=NOW + timedelta(days=1), interval_days=30)
    log.review("c1", "infra", NOW - timedelta(hours=1), 3, 30.0)
    return compute_stats(log.write(), [CardInfo("c1", "infra")], NOW, day_start_hour=0)


def test_summary_says_one_review_and_one_day_in_the_singular(tmp_path: Path) -> None:
    text = summary_text(one_review(tmp_path))
    assert "Today 1 review · streak 1 day · 1 review in all" in text
    assert "over 1 mature review ·" in text
    assert "1 reviews" not in text


@pytest.mark.parametrize("top", [1, 2, 3, 5, 6, 7, 11, 29, 250])
def test_count_ticks_are_whole_numbers_from_zero_past_the_top(top: int) -> None:
    ticks = count_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 6
    assert all(isinstance(t, int) for t in ticks) and ticks == sorted(set(ticks))


@run_async
async def test_forecast_axis_shows_whole_card_counts(tmp_path: Path) -> None:
    app = HostApp(StatsScreen(stats=one_review(tmp_path)))
    async with app.run_test(size=(80, 40)) as pilot:
        await until(pilot, lambda: bool(app.screen.query("#plot-forecast")))
        await pilot.pause()
        plot = app.screen.query_one("#plot-forecast", PlotextPlot)
        drawn = str(plot.render())
        labels = re.findall(r"^\s*([\d.]+)\s*[┤├]", drawn, flags=re.MULTILINE)
        assert labels and all("." not in label for label in labels)
        assert {"0", "1"} <= set(labels)


def test_calibration_table_fits_80_columns_with_title_and_verdict_on_one_line(
    tmp_path: Path,
) -> None:
    stats = one_review(tmp_path)
    console = Console(width=78, color_system=None, record=True)  # the screen's inner width
    console.print(calibration_table(stats))
    lines = console.export_text().splitlines()
    assert lines[0].strip() == "Lab predictions by certainty"
    assert stats.calibration_verdict in lines  # one line, not wrapped to the table's width
    assert max(len(line) for line in lines) <= 78
