"""The card browser on a numbers card: the front with the values of one fixed drawing, and a
line under the table, while that card is highlighted, saying what each review draws from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from drill.decks.loader import load_decks
from storage.db import open_database
from tests.support.browser_host import host
from tests.support.numbers_decks import fixed_front, write_numbers_deck
from tests.support.pilot import run_async, text_of, until
from tests.support.review_logs import LogBuilder


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([write_numbers_deck(tmp_path / "decks")], include_bundled=False)
    db = open_database(LogBuilder(tmp_path / "db.sqlite3").write())
    yield decks, db
    db.close()


def front_cell(app: Any, card_id: str) -> str:
    return app.screen.query_one("#browse-table", DataTable).get_cell(card_id, "front").plain


@run_async
async def test_a_numbers_card_shows_one_drawing_and_what_reviews_draw(setup: Any) -> None:
    decks, _ = setup
    app = host(*setup)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.screen.shown) == 2)  # type: ignore[attr-defined]
        front = fixed_front(decks.card("ring-bytes"))
        cell = front_cell(app, "ring-bytes")
        assert "{" not in cell and front.startswith(cell.removesuffix("…"))
        assert len(cell) > len("All-reduce 10 MB")  # the values are in what the column shows
        note = app.screen.query_one("#browse-numbers", Static)
        assert note.display
        shown = text_of(pilot, "#browse-numbers")
        assert shown.startswith("Numbers card: shown with one fixed drawing (seed 0)")
        assert "each review draws new values" in shown
        assert "size: 10 to 100 in steps of 10 [bold]MB[/bold]\ufffd" in shown  # as typed
        assert "n: 2 / 4 / 1,024 GPUs" in shown
        await pilot.press("enter", "down")  # to the plain card: no numbers, no line
        await until(pilot, lambda: not note.display)
        assert front_cell(app, "plain-card") == "What is {braced} text on a plain card?"
        await pilot.press("up")
        await until(pilot, lambda: note.display)
