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

from drill.errors import DrillError

RESUME = "resume"


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

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Mock round: pick one", id="picker-title")
            yield OptionList(id="rounds")
            yield Static("enter: start · escape: back", id="picker-hint")

    def on_mount(self) -> None:
        from drill.mock.launch import open_store
        from drill.mock.loader import list_rounds

        options = self.query_one("#rounds", OptionList)
        try:
            unfinished = open_store().latest_unfinished()
            rounds = list_rounds([d for d in self.deck_dirs if d.is_dir()])
        except DrillError as error:
            self.notify(str(error), severity="error", timeout=6)
            self.dismiss()
            return
        if unfinished is not None:
            options.add_option(Option(f"Resume interrupted round #{unfinished}", id=RESUME))
        for definition, _path in rounds:
            label = f"{definition.title} · {len(definition.phases)} phases"
            options.add_option(Option(label, id=definition.round))
        if options.option_count:
            options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        from drill.mock.launch import resume_round, start_round
        from drill.tui.mock_screen import MockRoundScreen

        choice = event.option.id or ""
        try:
            if choice == RESUME:
                run, rate = resume_round(deck_dirs=self.deck_dirs or None)
            else:
                run, rate = start_round(choice, deck_dirs=self.deck_dirs or None)
        except DrillError as error:
            self.notify(str(error), severity="error", timeout=6)
            return
        app = self.app
        self.dismiss()
        if run.finished:
            from drill.tui.mock_report_screen import GradingScreen

            app.push_screen(GradingScreen(run, rate=rate))
        else:
            app.push_screen(MockRoundScreen(run, rate=rate))


def open_mock_round(app: App[Any]) -> None:
    """Entry point for the home screen's `m` key."""
    options = getattr(app, "options", None)
    deck_dirs = list(getattr(options, "deck_dirs", None) or [])
    app.push_screen(MockPickerScreen([Path(d) for d in deck_dirs]))
