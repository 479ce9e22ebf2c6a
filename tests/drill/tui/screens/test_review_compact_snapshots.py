"""Snapshots at 80x24 and 120x40: every review-side screen keeps its essential keys and counts
visible (the footer's keys, "N left", the reveal hint under a toast)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.pilot import Pilot

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database
from tests.support.lab_fakes import CARD_YAML
from tests.support.pilot import reveal, settle, start_review

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


@pytest.fixture(autouse=True)
def warm(home: Path, deck_dir: Path) -> None:
    """A lab card with a `more:` text first (the widest review footer), then the usual decks;
    the deck cache and database exist already, so the first paint is the light one."""
    card = yaml.safe_load(CARD_YAML)
    card["more"] = "All-reduce averages the bucketed gradients, so every rank steps alike."
    deck = {"deck": "aa-lab", "title": "A lab deck", "cards": [card]}
    (deck_dir / "aa-lab.yaml").write_text(yaml.safe_dump(deck))
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()


async def _more(pilot: Pilot) -> None:
    await start_review(pilot)
    await pilot.press("m")
    await pilot.pause()


async def _after_bury(pilot: Pilot) -> None:
    """A toast ("Buried until tomorrow") over the next card's front and its reveal hint."""
    await start_review(pilot)
    await pilot.press("b")
    await pilot.pause()


async def _summary(pilot: Pilot) -> None:
    await start_review(pilot)
    for _ in range(6):
        await pilot.press("space", "4")
    await settle(pilot)


async def _study_form(pilot: Pilot) -> None:
    await settle(pilot)
    await pilot.press("c")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "steps", [settle, start_review, reveal, _more, _after_bury, _summary, _study_form]
)
def test_review_side_screens(snap_compare, make_app, size, steps) -> None:
    assert snap_compare(make_app(), terminal_size=size, run_before=steps)
