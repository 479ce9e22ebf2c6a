"""Snapshots of the stats screen at 120x40 and 80x24 (counts and keys visible), fixed data."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from drill.review.stats import CardInfo, Stats, compute_stats
from drill.tui.screens.stats import StatsScreen
from tests.support.pilot import HostApp, until
from tests.support.review_logs import LogBuilder

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def history(tmp_path: Path) -> Stats:
    rng = random.Random(3)
    cards = [CardInfo(f"c{i}", ("infra", "biotech")[i % 2], (f"t{i % 4}",)) for i in range(40)]
    log = LogBuilder(tmp_path / "db.sqlite3")
    for i, card in enumerate(cards[:30]):
        log.card(card.card_id, card.deck_id, due=NOW + timedelta(days=i % 20 - 2),
                 interval_days=(5, 30)[i % 2], lapses=i % 3, suspended=i == 29)  # fmt: skip
    for day in range(200):
        if day % 9 == 4:
            continue  # some days off
        for n in range(rng.randint(1, 12)):
            card = cards[(day + n) % 30]
            rating = 1 if rng.random() < 0.15 else 3
            log.review(card.card_id, card.deck_id, NOW - timedelta(days=day), rating, 30.0)
    for i in range(12):
        log.lab(("low", "medium", "high")[i % 3], i % 2 == 0, NOW)
    log.mock(NOW - timedelta(days=20), "standard", 0.55, "developing")
    log.mock(NOW - timedelta(days=6), "standard", 0.7, "solid")
    return compute_stats(log.write(), cards, NOW, day_start_hour=0)


async def painted(pilot: Pilot) -> None:
    await until(pilot, lambda: bool(pilot.app.screen.query(".stats-block")))
    await pilot.pause()


def test_stats_120x40(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = HostApp(StatsScreen(stats=history(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 40), run_before=painted)


def test_stats_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = HostApp(StatsScreen(stats=history(tmp_path)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=painted)


def test_stats_first_day_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stats = compute_stats(tmp_path / "none.sqlite3", [CardInfo("a", "d")], NOW, day_start_hour=0)
    app = HostApp(StatsScreen(stats=stats))
    assert snap_compare(app, terminal_size=(80, 24), run_before=painted)
