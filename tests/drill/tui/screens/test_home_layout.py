"""The home screen's deck table fits the terminal: long deck titles are cut with an ellipsis so
that Due, New and "Next due" always show, at 80 columns too, and again after a resize."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.tui.screens.home import HomeScreen
from storage.db import open_database
from tests.support.pilot import run_async, screen_text, settle

LONG_TITLE = "Biotech ML training - molecular data, sequences, structures and assays at scale"
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


@pytest.fixture(autouse=True)
def long_titled_deck(home: Path, deck_dir: Path) -> None:
    """A deck whose title is wider than an 80-column table; the deck cache and database exist
    already, so the first paint is the light one (no repaint racing a snapshot)."""
    card = "  - id: long-1\n    level: easy\n    front: Q\n    back: A\n"
    (deck_dir / "long.yaml").write_text(f"deck: long\ntitle: {LONG_TITLE}\ncards:\n{card}")
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()


def _table_fits(table: DataTable[object]) -> bool:
    used = sum(column.get_render_width(table) for column in table.columns.values())
    return used <= table.scrollable_content_region.width


@run_async
async def test_next_due_fits_at_80_columns_and_after_a_resize(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        table = app.screen.query_one("#decks", DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["Deck", "Due", "New", "Next due"]
        assert _table_fits(table)
        titles = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        cut = [t for t in titles if t.endswith("…")]
        assert len(cut) == 1 and LONG_TITLE.startswith(cut[0][:-1])
        assert "Alpha deck" in titles  # a title that fits is left whole

        await pilot.resize_terminal(160, 24)
        await settle(pilot)
        titles = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert LONG_TITLE in titles and _table_fits(table)

        await pilot.resize_terminal(60, 24)
        await settle(pilot)
        assert _table_fits(table)


@run_async
async def test_todays_labels_show_whole_after_a_resize(make_app) -> None:
    """Filled again during a resize, the today table kept its label column at the header's
    width ("Revie" for "Reviews"): it is filled once the resize is laid out."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "Reviews · nothing due now" in screen_text(app)
        for size in ((80, 24), (100, 30), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            shown = screen_text(app)
            assert "Reviews · nothing due now" in shown, (size, shown)
            assert "New cards" in shown


@pytest.mark.parametrize("size", SIZES)
def test_home_with_a_long_deck_title(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=size, run_before=settle)
