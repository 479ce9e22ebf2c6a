"""Text from outside is text (DESIGN.md): a deck whose every string is markup, terminal escapes
and HTML goes through the whole app (home, review with back, more and the lab panel, summary,
browser with history, stats, a lab run with hostile output and its results view) without a
crash; no screen holds a control character, and brackets show as typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input

from drill.tui.app import AppOptions, DrillApp
from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.browser_dialogs import HistoryScreen
from drill.tui.screens.home import HomeScreen
from drill.tui.screens.lab_panel import LabPanelScreen, open_lab_panel
from drill.tui.screens.lab_results import LabResultsScreen
from drill.tui.screens.review import ReviewScreen
from drill.tui.screens.stats import StatsScreen
from drill.tui.screens.summary import SummaryScreen
from tests.support.hostile_decks import (
    HOSTILE_RESULT,
    HOSTILE_VALUE,
    SHOWN,
    TITLE_SHOWN,
    control_chars,
    write_hostile_text_deck,
)
from tests.support.lab_fakes import Event, FakeRunner
from tests.support.pilot import Notices, choose, run_async, screen_text, settle, until


class HostileRunner(FakeRunner):
    """A fake lab run whose progress messages (the panel's log) are hostile too."""

    def __call__(self, *args: Any) -> dict[str, Any]:
        on_progress = args[5]  # name, params, world_size, out_dir, timeout_s, on_progress, cancel
        on_progress(Event(0, 1, HOSTILE_VALUE))
        return super().__call__(*args)


def shows(app: DrillApp, *expected: str) -> str:
    """The screen as text: not one control character, and every `expected` as typed."""
    svg = app.export_screenshot()
    assert control_chars(svg) == [], type(app.screen).__name__
    text = screen_text(app)
    for words in expected:
        assert words in text, (type(app.screen).__name__, words, text)
    assert app.crash is None
    return text


@run_async
async def test_hostile_deck_text_is_shown_as_text_on_every_screen(tmp_path: Path) -> None:
    write_hostile_text_deck(tmp_path / "decks")
    notices = Notices()
    options = AppOptions(deck_dirs=[tmp_path / "decks"], include_bundled=False, headless=True)
    app = DrillApp(options)
    async with app.run_test(size=(160, 50), message_hook=notices, notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen) and app.screen.loaded
        shows(app, SHOWN)  # the title cell: every bracket as typed, "[/x]" no crash
        await pilot.press("enter")  # opens the deck ("[link=...]" crashed it)
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        shows(app, TITLE_SHOWN, "C++ [advanced]")  # the status line and the front
        await pilot.press("space", "m")  # the back, its rubric and the `more:` text
        await pilot.pause()
        shows(app, "C++ [advanced]")
        await pilot.press("l")  # the lab panel: the predict question and its choices
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        await pilot.pause()
        shows(app, "Predict: C++ [advanced] [/x]", "[/y]")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        await pilot.press("4")  # Easy: no learning step brings it back in this session
        await until(pilot, lambda: review.card is not None and review.card.id == "hostile-plain")
        await pilot.press("space")
        await pilot.pause()
        shows(app, "C++ [advanced]")
        await pilot.press("4")
        await until(pilot, lambda: isinstance(app.screen, SummaryScreen))
        shows(app, f"Session done · {TITLE_SHOWN}")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))

        await pilot.press("B")  # the browser: fronts, then a hostile query and a history
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        browser = app.screen
        await until(pilot, lambda: bool(browser.shown))
        shows(app, "hostile-lab", "C++ [advanced] [/x]")
        browser.query_one("#browse-query", Input).value = "tag:[/z] is:[bold] [/x] lev:"
        await pilot.pause()
        shows(app)
        browser.query_one("#browse-query", Input).value = "hostile-lab"
        await until(pilot, lambda: len(browser.shown) == 1)
        await pilot.press("down", "h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        shows(app, "Review history of hostile-lab")
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))

        await pilot.press("S")  # the stats
        await until(pilot, lambda: isinstance(app.screen, StatsScreen))
        await settle(pilot)
        shows(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))

        # a lab run of the hostile card whose output (log, checks, error) is hostile too
        services = app.services
        assert services is not None
        card = services.decks.card("hostile-lab")
        runner = HostileRunner(HOSTILE_RESULT)
        runs = tmp_path / "runs"
        assert open_lab_panel(app, services, card, "hostile", runner=runner, runs_root=runs)
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        panel = app.screen
        await choose(pilot, "predict-choice", 1)
        await choose(pilot, "certainty", 0)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        await pilot.pause(0.3)  # the log is fed from a timer
        shows(app, "[$accent]v", "Predicted: [/y]")
        runner.release.set()
        await until(pilot, lambda: panel.query_one("#outcome").display)
        await pilot.pause()
        shows(app, "C++ [advanced] [/x]", "You predicted: [/y]")
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, LabResultsScreen))
        await pilot.pause()
        shows(app, "C++ [advanced] [/x]")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is panel)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        shows(app)
    assert app.crash is None
    assert all(control_chars(message) == [] for message in notices.messages())
