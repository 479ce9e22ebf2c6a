"""A database that goes bad while the app runs gives notices, never a crash: garbage written
over the middle of drill.sqlite3 after the app opened it, then reveal, rate, go home, quit."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from drill.tui.screens.home import HomeScreen
from drill.tui.screens.review import ReviewScreen
from tests.support.db_damage import corrupt_middle
from tests.support.pilot import Notices, run_async, until

SIZE = (100, 32)


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@run_async
async def test_corrupted_database_gives_notices_and_the_app_keeps_running(
    make_app, home: Path
) -> None:
    app = make_app()
    notices = Notices()
    async with app.run_test(size=SIZE, message_hook=notices) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: screen.session is not None)
        corrupt_middle(home / "drill.sqlite3")

        await pilot.press("space")  # reveal reads the card's state for the intervals
        await pilot.pause()
        assert app.is_running and screen.revealed
        errors = notices.messages("error")
        assert len(errors) == 1 and "malformed" in errors[0] and "\n" not in errors[0]

        await pilot.press("3")  # the write fails too: a notice, the card stays
        await pilot.pause()
        assert app.is_running and app.screen is screen and screen.card.id == "a1"
        assert notices.messages("error")[-1].startswith("Not saved: ")

        await pilot.press("q")  # home reads the counts again: a notice, the old counts stay
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.pause()
        assert app.is_running
        assert "Alpha deck" in str(app.screen.query_one("#decks").get_row_at(0))
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and app.crash is None
