"""Browser columns follow the terminal width, and the row keys stay in the footer (and work)
while the search box has the focus."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable
from textual.widgets._footer import FooterKey

from drill.decks.loader import load_decks
from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.browser_columns import CARD_MIN, FRONT_MIN, layout
from drill.tui.screens.browser_dialogs import HistoryScreen
from storage.db import open_database
from tests.support.pilot import HostApp, run_async, until
from tests.support.review_logs import LogBuilder, write_browse_decks
from tests.support.services import slot_for

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LONGEST_BUNDLED_ID = 36  # llm-activation-checkpointing-pytorch, when this was written


def widths(columns: Any) -> dict[str, int]:
    return {c.key: c.width for c in columns}


def test_layout_at_120_keeps_the_longest_bundled_id_and_every_column() -> None:
    columns = widths(layout(118, LONGEST_BUNDLED_ID, 14))
    assert list(columns) == ["card", "deck", "level", "state", "due", "flags", "front"]
    assert columns["card"] == LONGEST_BUNDLED_ID and columns["front"] >= FRONT_MIN
    assert sum(columns.values()) + len(columns) - 1 == 118


def test_layout_at_80_drops_level_and_deck_before_squeezing_the_front() -> None:
    columns = widths(layout(78, LONGEST_BUNDLED_ID, 14))
    assert list(columns) == ["card", "state", "due", "flags", "front"]
    assert columns["front"] >= FRONT_MIN and columns["card"] >= CARD_MIN
    assert sum(columns.values()) + len(columns) - 1 == 78


def test_layout_gives_short_ids_only_what_they_need() -> None:
    columns = widths(layout(118, 12, 7))
    assert columns["card"] == 12 and columns["front"] == 118 - 12 - 7 - 31 - 6


@pytest.fixture
def bundled(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([], include_bundled=True)
    db = open_database(tmp_path / "db.sqlite3")
    yield decks, db
    db.close()


def front_width(app: HostApp) -> int:
    return app.screen.query_one("#browse-table", DataTable).columns["front"].width  # type: ignore[index]


@run_async
async def test_columns_follow_the_terminal_width(bundled: tuple[Any, Any]) -> None:
    decks = bundled[0]
    longest = max((c.id for d in decks.decks for c in d.deck.cards), key=len)
    assert len(longest) > 24  # too long for 80 columns
    app = HostApp(BrowserScreen(slot_for(*bundled, now=lambda: NOW), query=longest))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await until(pilot, lambda: [r.card_id for r in screen.shown] == [longest])  # type: ignore[attr-defined]
        table = screen.query_one("#browse-table", DataTable)
        assert str(table.get_row(longest)[0]) == longest  # the whole id
        wide_front = front_width(app)
        assert wide_front >= FRONT_MIN
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: "level" not in table.columns)
        assert str(table.get_row(longest)[0]).endswith("…")  # cut, and says so
        assert FRONT_MIN <= front_width(app) < wide_front
        await pilot.resize_terminal(120, 40)
        await until(pilot, lambda: front_width(app) == wide_front)


@pytest.fixture
def infra(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("ddp-bucket", "infra", due=NOW + timedelta(days=2), interval_days=3)
    log.review("ddp-bucket", "infra", NOW - timedelta(days=3), 3, 3.0)
    db = open_database(log.write())
    yield decks, db
    db.close()


def footer(app: HostApp) -> dict[str, str]:
    return {k.description: k.key_display for k in app.screen.query(FooterKey)}


@run_async
async def test_row_keys_show_and_work_while_typing(infra: tuple[Any, Any]) -> None:
    decks, db = infra
    app = HostApp(BrowserScreen(slot_for(decks, db, now=lambda: NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await until(pilot, lambda: len(screen.shown) == 5)  # type: ignore[attr-defined]
        await pilot.press(*"ddp")  # the letters are search text
        await until(pilot, lambda: [r.card_id for r in screen.shown] == ["ddp-bucket"])  # type: ignore[attr-defined]
        keys = footer(app)
        assert keys == {"Back": "esc", "Suspend": "^s", "Bury": "^t", "Reset": "^r",
                        "History": "^y", "Edit": "^o", "Lab": "^l"}  # fmt: skip
        await pilot.press("ctrl+s")
        await until(
            pilot, lambda: (db.review.card_state("ddp-bucket") or {}).get("suspended") is True
        )
        await pilot.press("ctrl+t")
        await until(pilot, lambda: db.review.card_state("ddp-bucket")["buried_until"] is not None)  # type: ignore[index]
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert screen.query_one("#browse-query").has_focus
        await pilot.press("down")  # on the results the footer names the letters
        await until(pilot, lambda: footer(app).get("Suspend") == "s")
        assert footer(app)["History"] == "h"
