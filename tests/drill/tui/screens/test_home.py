"""`m` on the home screen: pick a round, play it; an interrupted round is offered for resume."""

from __future__ import annotations

from textual.widgets import OptionList

from drill.mock.coding.catalogue import catalogue
from drill.tui.screens.home import HomeScreen
from drill.tui.screens.mock_picker import MockPickerScreen
from drill.tui.screens.mock_round import MockRoundScreen
from tests.support.pilot import run_async

SIZE = (100, 32)
# the coding round on each prompt of the catalogue, in the app and in a notebook, come first
CODING_ENTRIES = 2 * len(catalogue())


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
        # the standard round is the coding round; the text rounds follow as talk-only practice
        assert ids[:2] == ["coding:new", "coding:notebook"]
        assert ids[2:4] == ["coding:new:eval", "coding:notebook:eval"]
        assert set(ids[CODING_ENTRIES:]) == {"standard", "quick"}
        options = app.screen.query_one("#rounds", OptionList)
        for round_id in ("standard", "quick"):
            assert str(options.get_option(round_id).prompt).startswith("Talk-only practice round")

        options.highlighted = ids.index("quick")
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
        assert option_ids(app)[CODING_ENTRIES] == "resume"  # after the coding-round entries
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
        assert ids[0] == "coding:new"
        options = app.screen.query_one("#rounds", OptionList)
        assert str(options.get_option("coding:new").prompt) == (
            "Standard round: DDP training pipeline (55 min) — train.py under torchrun"
        )
        assert options.highlighted == 0  # the default: enter starts the standard round
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
        assert option_ids(app)[CODING_ENTRIES] == "resume:coding"
        options = app.screen.query_one("#rounds", OptionList)
        assert str(options.get_option("resume:coding").prompt) == (
            "Resume interrupted coding round #1"
        )
    resumed = CodingSession.latest_unfinished(default_rounds_dir())
    assert resumed is not None and resumed.code().startswith("# hi\n")


@run_async
async def test_m_offers_the_standard_round_in_a_notebook(make_app) -> None:
    from drill.mock.coding.notebook import find_train_cell
    from drill.mock.coding.session import CodingSession, default_rounds_dir
    from drill.tui.screens.coding_round import CodingRoundScreen
    from tests.support.pilot import Notices

    notices = Notices()
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=notices) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("down", "enter")  # the second entry
        await pilot.pause()
        assert isinstance(app.screen, CodingRoundScreen)
        notebook = default_rounds_dir() / "1" / "round.ipynb"
        assert app.screen.session.notebook_path == notebook
        assert find_train_cell(notebook).source.strip()  # a real notebook with the train.py cell
        assert any(str(notebook) in text for text in notices.messages())
        app.pop_screen()
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        options = app.screen.query_one("#rounds", OptionList)
        assert str(options.get_option("resume:coding").prompt) == (
            "Resume interrupted notebook round #1"
        )
    resumed = CodingSession.latest_unfinished(default_rounds_dir())
    assert resumed is not None and resumed.notebook_path == notebook
