"""The review screen on a card with a lab, a `more:` text and an exercise (the widest footer:
14 bundled cards have all three) at 80x24: every key fits on screen."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets._footer import FooterKey

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database
from tests.support.lab_fakes import CARD_YAML
from tests.support.pilot import reveal, run_async, start_review

KEYS = ["Show/Good", "Undo", "Bury", "Suspend", "More", "Lab", "Exercise", "Home"]


@pytest.fixture(autouse=True)
def warm(home: Path, deck_dir: Path) -> None:
    """The card with all three comes first; the deck cache and database exist already."""
    card = yaml.safe_load(CARD_YAML)
    card["more"] = "All-reduce averages the bucketed gradients, so every rank steps alike."
    card["exercise"] = "ddp-by-hand"
    deck = {"deck": "aa-all", "title": "Lab, more and exercise", "cards": [card]}
    (deck_dir / "aa-all.yaml").write_text(yaml.safe_dump(deck))
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()


@pytest.mark.parametrize("steps", [start_review, reveal])
def test_review_with_lab_more_and_exercise_80x24(snap_compare, make_app, steps) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=steps)


@run_async
async def test_every_review_key_fits_in_80_columns(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await start_review(pilot)
        assert getattr(app.screen, "card", None) is not None
        keys = {k.description: k for k in app.screen.query(FooterKey)}
        assert list(keys) == KEYS
        # a key's text ends one cell before its region (its right padding may fall off)
        assert all(k.region.width > 0 and k.region.right - 1 <= 80 for k in keys.values())
