"""Snapshots of the card browser at 120x40 and 80x24 (counts, hint and keys visible)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from drill.decks.loader import load_decks
from drill.tui.screens.browser import BrowserScreen
from storage.db import open_database
from tests.support.pilot import HostApp, until
from tests.support.review_logs import LogBuilder, write_browse_decks
from tests.support.services import slot_for

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def data(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("fsdp-shard", "infra", due=NOW - timedelta(days=1), interval_days=30, lapses=9,
             leech=True)  # fmt: skip
    log.card("ddp-bucket", "infra", due=NOW + timedelta(days=2), interval_days=3)
    log.card("msa-depth", "biotech", due=NOW + timedelta(days=9), suspended=True)
    db = open_database(log.write())
    yield decks, db
    db.close()


def app_with(data: tuple[Any, Any], query: str = "") -> HostApp:
    return HostApp(BrowserScreen(slot_for(*data, now=lambda: NOW), query=query))


async def loaded(pilot: Pilot) -> None:
    await until(pilot, lambda: "cards" in str(pilot.app.screen.query_one("#browse-count").render()))
    await pilot.pause()


def test_browser_120x40(snap_compare, data) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_with(data), terminal_size=(120, 40), run_before=loaded)


async def on_results(pilot: Pilot) -> None:
    await loaded(pilot)
    await pilot.press("enter")  # focus the results: the footer lists the row keys
    await pilot.pause()


def test_browser_80x24(snap_compare, data) -> None:  # type: ignore[no-untyped-def]
    app = app_with(data, "tag:fsdp")
    assert snap_compare(app, terminal_size=(80, 24), run_before=on_results)


def test_browser_results_120x40(snap_compare, data) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_with(data), terminal_size=(120, 40), run_before=on_results)


def test_browser_bad_query_80x24(snap_compare, data) -> None:  # type: ignore[no-untyped-def]
    app = app_with(data, "is:angry protein")
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)
