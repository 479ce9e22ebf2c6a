"""Home screen `m`: pick a mock round (or resume an interrupted one) and play it.

The round itself is drill/tui/mock_screen.py; this is only the chooser and the set-up call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill import actions

RESUME = "resume"
RESUME_CODING = "resume:coding"
CODING = "coding:new"  # not a round-file id (those have no colon)
CODING_LABEL = "coding — write train.py, graded under torchrun"


class MockPickerScreen(ModalScreen[None]):
    """A list of round definitions, plus 'resume' when a round was interrupted."""

    DEFAULT_CSS = """
    MockPickerScreen { align: center middle; }
    #picker { width: 72; height: auto; max-height: 80%; border: round $primary;
              background: $surface; padding: 0 1; }
    #picker-title { text-style: bold; padding-bottom: 1; }
    #picker-hint { color: $text-muted; padding-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Back")]

    def __init__(self, deck_dirs: list[Path]) -> None:
        super().__init__()
        self.deck_dirs = deck_dirs
        self.coding_session: Any = None  # the interrupted coding round, when one is offered

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Mock round: pick one", id="picker-title")
            yield OptionList(id="rounds")
            yield Static("enter: start · escape: back", id="picker-hint")

    def on_mount(self) -> None:
        from drill.mock.launch import latest_interrupted
        from drill.mock.loader import list_rounds

        options = self.query_one("#rounds", OptionList)
        found = actions.read(
            lambda: (
                latest_interrupted(),
                list_rounds([d for d in self.deck_dirs if d.is_dir()]),
            )
        )
        if found.value is None:  # a bad round file or an unreadable database
            self.notify(str(found.notice), severity="error", timeout=6)
            self.dismiss()
            return
        unfinished, rounds = found.value
        if unfinished is not None and unfinished[0] == "coding":
            self.coding_session = unfinished[1]
            label = f"Resume interrupted coding round #{unfinished[1].round_id}"
            options.add_option(Option(label, id=RESUME_CODING))
        elif unfinished is not None:
            options.add_option(Option(f"Resume interrupted round #{unfinished[1]}", id=RESUME))
        for definition, _path in rounds:
            label = f"{definition.title} · {len(definition.phases)} phases"
            options.add_option(Option(label, id=definition.round))
        options.add_option(Option(CODING_LABEL, id=CODING))
        if options.option_count:
            options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        from drill.mock.launch import resume_round, start_round
        from drill.tui.screens.mock_round import MockRoundScreen

        choice = event.option.id or ""
        if choice in (CODING, RESUME_CODING):
            self._open_coding(resume=choice == RESUME_CODING)
            return
        deck_dirs = self.deck_dirs or None
        if choice == RESUME:
            started = actions.read(lambda: resume_round(deck_dirs=deck_dirs))
        else:
            started = actions.read(lambda: start_round(choice, deck_dirs=deck_dirs))
        if started.value is None:
            self.notify(str(started.notice), severity="error", timeout=6)
            return
        run, rate = started.value
        app = self.app
        self.dismiss()
        if run.finished:
            from drill.tui.screens.mock_report import GradingScreen

            app.push_screen(GradingScreen(run, rate=rate))
        else:
            app.push_screen(MockRoundScreen(run, rate=rate))

    def _open_coding(self, *, resume: bool) -> None:
        from drill.mock.coding.session import CodingSession, default_rounds_dir
        from drill.tui.screens.coding_round import CodingRoundScreen

        if resume and self.coding_session is not None:
            session = self.coding_session
        else:
            try:
                session = CodingSession.create(default_rounds_dir())
            except OSError as error:
                self.notify(f"Could not set the coding round up: {error}", severity="error")
                return
        app = self.app
        self.dismiss()
        app.push_screen(CodingRoundScreen(session, deck_dirs=self.deck_dirs or None))


def open_mock_round(app: App[Any]) -> None:
    """Entry point for the home screen's `m` key."""
    options = getattr(app, "options", None)
    deck_dirs = list(getattr(options, "deck_dirs", None) or [])
    app.push_screen(MockPickerScreen([Path(d) for d in deck_dirs]))
