"""Snapshot tests of the review screen (fixed clock, fixed terminal size, tmp DRILL_HOME)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database
from tests.support.pilot import reveal, settle, start_review

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def warm(home: Path, deck_dir: Path) -> None:
    """A previous run left the deck cache and the database: the app paints from the light
    read at once, with no cold-start repaint racing the screenshot."""
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()


def test_review_screen_front(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=start_review)


def test_review_screen_revealed(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=reveal)


def test_home_screen(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)
