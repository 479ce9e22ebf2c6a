"""`m` on the home screen: pick a round, play it; an interrupted round is offered for resume."""

from __future__ import annotations

from textual.widgets import OptionList

from drill.tui.screens.home import HomeScreen
from drill.tui.screens.mock_picker import MockPickerScreen
from drill.tui.screens.mock_round import MockRoundScreen
from tests.support.pilot import run_async

SIZE = (100, 32)


def option_ids(app) -> list[str]:
    options = app.screen.query_one("#rounds", OptionList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


@run_async
async def test_m_starts_a_round_and_offers_resume(make_app, query) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MockPickerScreen)
        ids = option_ids(app)
        assert "resume" not in ids  # nothing interrupted yet
        assert {"standard", "quick"} <= set(ids)

        assert ids[0] == "quick"  # highlighted first: enter starts it
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MockRoundScreen)
        rounds = query("SELECT id, status FROM mock_round")
        assert len(rounds) == 1 and rounds[0][1] == "running"

        app.pop_screen()  # leave the round unfinished, as a crash or quit would
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("m")
        await pilot.pause()
        assert option_ids(app)[0] == "resume"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


@run_async
async def test_m_offers_the_coding_round_and_autosaves_what_is_typed(make_app) -> None:
    from drill.mock.coding.session import CodingSession, default_rounds_dir
    from drill.tui.screens.coding_round import CodingRoundScreen
    from tests.support.pilot import until

    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MockPickerScreen)
        ids = option_ids(app)
        assert ids[-1] == "coding:new"
        options = app.screen.query_one("#rounds", OptionList)
        assert "graded under torchrun" in str(options.get_option("coding:new").prompt)
        options.highlighted = len(ids) - 1
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CodingRoundScreen)
        editor = app.screen.query_one("#editor")
        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.press("#", " ", "h", "i", "enter")
        script = default_rounds_dir() / "1" / "train.py"
        await until(pilot, lambda: script.read_text().startswith("# hi\n"))

        app.pop_screen()  # leave the coding round unfinished
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        assert option_ids(app)[0] == "resume:coding"
    resumed = CodingSession.latest_unfinished(default_rounds_dir())
    assert resumed is not None and resumed.code().startswith("# hi\n")
