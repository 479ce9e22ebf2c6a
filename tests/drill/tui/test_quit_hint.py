"""ctrl+c does not quit: Textual then says how to quit. Its hint is written as markup ("Press
[b]ctrl+q[/b] ..."), and drill's notices are text, so drill says it again as text: on the
review screen and in the coding round, the toast reads "Press ctrl+q to quit the app"."""

from __future__ import annotations

from drill.mock.coding.session import CodingSession
from drill.tui.screens.coding_round import CodingApp
from drill.tui.screens.review import ReviewScreen
from tests.support.pilot import Notices, run_async, screen_text, start_review, until
from tests.support.services import app_slot

HINT = "Press ctrl+q to quit the app"


async def hint_shown(pilot, notices: Notices) -> str:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+c")
    await until(pilot, lambda: HINT in notices.messages())
    await pilot.pause(0.1)  # the toast is drawn
    return screen_text(pilot.app)


@run_async
async def test_ctrl_c_on_the_review_screen_says_how_to_quit_as_text(make_app) -> None:  # type: ignore[no-untyped-def]
    notices = Notices()
    app = make_app()
    async with app.run_test(size=(120, 40), message_hook=notices, notifications=True) as pilot:
        await start_review(pilot)
        assert isinstance(app.screen, ReviewScreen)
        text = await hint_shown(pilot, notices)
        assert HINT in text and "[b]" not in text
    assert not [m for m in notices.messages() if "[b]" in m or "[/" in m]


@run_async
async def test_ctrl_c_in_the_coding_round_says_how_to_quit_as_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    notices = Notices()
    app = CodingApp(CodingSession.create(tmp_path / "rounds"), app_slot())
    async with app.run_test(size=(140, 40), message_hook=notices, notifications=True) as pilot:
        text = await hint_shown(pilot, notices)
        assert HINT in text and "[b]" not in text
    assert not [m for m in notices.messages() if "[b]" in m or "[/" in m]
