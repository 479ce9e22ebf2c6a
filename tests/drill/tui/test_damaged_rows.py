"""A card whose stored schedule holds values drill never writes (card_state.state = 99, a due
time that is not a time) is skipped by a review in the app; the other cards review as usual and
the app never stops with "unexpected error: ValueError" (issue 25, item 6)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from drill.tui.screens.review import ReviewScreen
from tests.support.clocks import TUI_START
from tests.support.pilot import Notices, run_async, until
from tests.support.review_logs import LogBuilder

SIZE = (100, 32)


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("damage", ["state = 99", "due = 'garbage'", "stability = -1"])
@run_async
async def test_review_skips_a_card_with_a_damaged_row(make_app, home: Path, damage: str) -> None:
    log = LogBuilder(home / "drill.sqlite3")
    for card_id in ("a1", "a2"):
        log.card(card_id, "alpha", due=TUI_START - timedelta(days=1))
    log.write()
    conn = sqlite3.connect(home / "drill.sqlite3")
    with conn:
        conn.execute(f"UPDATE card_state SET {damage} WHERE card_id = 'a1'")
    conn.close()

    app = make_app()
    notices = Notices()
    shown: list[str] = []
    async with app.run_test(size=SIZE, message_hook=notices) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: screen.session is not None)
        for _ in range(8):
            if app.screen is not screen or screen.card is None:
                break
            shown.append(screen.card.id)
            await pilot.press("space")
            await pilot.pause()
            await pilot.press("3")
            await settle(pilot)
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
    assert app.crash is None
    assert "a1" not in shown and "a2" in shown
    assert not [m for m in notices.messages() if "unexpected" in m.lower()]


@run_async
async def test_review_says_once_which_cards_it_skipped(make_app, home: Path) -> None:
    log = LogBuilder(home / "drill.sqlite3")
    for card_id in ("a1", "a2"):
        log.card(card_id, "alpha", due=TUI_START - timedelta(days=1))
    log.write()
    conn = sqlite3.connect(home / "drill.sqlite3")
    with conn:
        conn.execute("UPDATE card_state SET state = 99 WHERE card_id = 'a1'")
        hostile = "[/oops]\x1b]2;pwned\x07"  # an id no deck has, markup and a terminal escape
        conn.execute(
            "INSERT INTO card_state (card_id, deck_id, state, reps, lapses, suspended, leech) "
            "VALUES (?, 'alpha', 99, 0, 0, 0, 0)",
            (hostile,),
        )
    conn.close()

    app = make_app()
    notices = Notices()
    async with app.run_test(size=SIZE, message_hook=notices) as pilot:
        await settle(pilot)
        line = app.screen.query_one("#home-notice", Static)  # home: a status line
        text = str(line.render())
        assert line.display and text.startswith("2 card(s) skipped") and "[/oops]" in text
        assert "\x1b" not in text
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: screen.session is not None)
        for _ in range(3):  # rating cards does not repeat it
            await pilot.press("space")
            await pilot.pause()
            await pilot.press("3")
            await settle(pilot)
        assert app.is_running
    assert app.crash is None
    skipped = [m for m in notices.messages("warning") if "skipped" in m]
    assert len(skipped) == 1, notices.shown
    assert skipped[0].startswith("2 card(s) skipped") and "a1" in skipped[0]
    assert "drill db check" in skipped[0] and "[/oops]" in skipped[0]
    assert "\x1b" not in skipped[0] and "\x07" not in skipped[0]


@run_async
async def test_home_shows_no_notice_line_when_nothing_is_damaged(make_app, home: Path) -> None:
    log = LogBuilder(home / "drill.sqlite3")
    log.card("a1", "alpha", due=TUI_START - timedelta(days=1))
    log.write()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#home-notice", Static).display
