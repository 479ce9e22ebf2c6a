"""The browser's dialogs (a card's review history, the reset confirmation) and the stats
screen's adopt-parameters confirmation at 80x24 and 120x40: the question, the count and the
keys that answer or close them stay visible."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from drill.decks.loader import load_decks
from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.browser_dialogs import ConfirmScreen, HistoryScreen
from storage.db import open_database
from tests.support.pilot import HostApp, until
from tests.support.review_logs import LogBuilder, write_browse_decks
from tests.support.services import slot_for

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
ADOPT = (
    "Adopt the fitted FSRS parameters?\nlog loss 0.3412 with the current parameters, 0.3187 "
    "with the fitted ones (12000 usable reviews).\nThey are written to settings.toml "
    "(fsrs_parameters) and schedule every review from now on."
)  # what the stats screen's `o` asks (drill/tui/screens/stats.py)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the history prints local times
    time.tzset()


@pytest.fixture
def data(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("fsdp-shard", "infra", due=NOW - timedelta(days=1), interval_days=30, lapses=2)
    for days_ago in range(40, 0, -2):  # 20 reviews: more than the dialog shows at 80x24
        log.review("fsdp-shard", "infra", NOW - timedelta(days=days_ago), 1 if days_ago % 6 else 3,
                   float(days_ago))  # fmt: skip
    db = open_database(log.write())
    yield decks, db
    db.close()


def open_with(key: str, dialog: type) -> Any:
    async def steps(pilot: Pilot) -> None:
        await until(pilot, lambda: bool(getattr(pilot.app.screen, "shown", None)))
        await pilot.press("enter", key)
        await until(pilot, lambda: isinstance(pilot.app.screen, dialog))
        await pilot.pause()

    return steps


@pytest.mark.parametrize("size", SIZES)
def test_history_dialog(snap_compare, data, size) -> None:  # type: ignore[no-untyped-def]
    app = HostApp(BrowserScreen(slot_for(*data, now=lambda: NOW), query="fsdp-shard"))
    assert snap_compare(app, terminal_size=size, run_before=open_with("h", HistoryScreen))


@pytest.mark.parametrize("size", SIZES)
def test_reset_confirm_dialog(snap_compare, data, size) -> None:  # type: ignore[no-untyped-def]
    app = HostApp(BrowserScreen(slot_for(*data, now=lambda: NOW), query="fsdp-shard"))
    assert snap_compare(app, terminal_size=size, run_before=open_with("r", ConfirmScreen))


@pytest.mark.parametrize("size", SIZES)
def test_adopt_parameters_confirm_dialog(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(HostApp(ConfirmScreen(ADOPT)), terminal_size=size)
