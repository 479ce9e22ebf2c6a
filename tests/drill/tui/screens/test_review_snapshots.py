"""Snapshot tests of the review screen (fixed clock, fixed terminal size, tmp DRILL_HOME)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def warm(home: Path, deck_dir: Path) -> None:
    """A previous run left the deck cache and the database: the app paints from the light
    read at once, with no cold-start repaint racing the screenshot."""
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()


async def _start_review(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("a")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _reveal(pilot: Pilot) -> None:
    await _start_review(pilot)
    await pilot.press("space")
    await pilot.pause()


def test_review_screen_front(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_start_review)


def test_review_screen_revealed(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_reveal)


def test_home_screen(snap_compare, make_app) -> None:
    async def settle(pilot: Pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)
