"""The labs list shows the highlighted lab's summary in full at every width (issue 26: at 120
columns the summary column cut it to about 20 characters), and the home footer names the
exercises as the README does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from drill.decks.loader import load_decks
from drill.tui.screens.labs import LabsScreen
from tests.support.lab_screens import one_card_decks as _deck
from tests.support.pilot import HostApp, run_async, screen_text, until
from tests.support.services import slot_for
from trainer_lab.catalogue import CATALOGUE


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@run_async
async def test_the_highlighted_labs_summary_shows_in_full(
    db: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    decks = load_decks([_deck(tmp_path)], include_bundled=False)
    screen = LabsScreen(slot_for(decks, db), runs_root=tmp_path / "runs")
    app = HostApp(screen)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: screen.selected_lab() is not None)
        for _ in range(3):  # the first lab, then two more down the list
            lab = screen.selected_lab()
            assert lab is not None
            summary = str(screen.query_one("#lab-summary", Static).render())
            assert _words(summary) == _words(CATALOGUE[lab].summary)
            # on screen too, every word of it (wrapped, never cut)
            shown = " ".join(screen_text(app).split())
            assert " ".join(_words(CATALOGUE[lab].summary)) in shown
            await pilot.press("down")
            await until(pilot, lambda previous=lab: screen.selected_lab() != previous)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@run_async
async def test_home_footer_says_exercises_and_keeps_quit(make_app, size) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        assert "X Exercises" in footer and "Kata" not in footer
        assert footer.rstrip().endswith("q Quit")
