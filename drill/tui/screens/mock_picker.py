"""Home screen `m`: pick a mock round (or resume an interrupted one) and play it.

The round itself is drill/tui/mock_screen.py; this is only the chooser and the set-up call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill import actions
from drill.tui.plain import shown

if TYPE_CHECKING:
    from drill.mock.coding.session import CodingSession
    from drill.services import Services, ServicesSlot
    from drill.tui.host import DrillHost

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

    def __init__(self, slot: ServicesSlot) -> None:
        super().__init__()
        self.slot = slot
        self.services: Services | None = None
        self.coding_session: CodingSession | None = None  # an interrupted one, when offered

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Mock round: pick one", id="picker-title")
            yield OptionList(id="rounds")
            yield Static("enter: start · escape: back", id="picker-hint")

    async def on_mount(self) -> None:
        from drill.mock.loader import list_rounds

        services = self.services = await self.slot.wait()
        if services is None:
            self.notify("The decks or the database did not load.", severity="error", timeout=6)
            self.dismiss()
            return
        options = self.query_one("#rounds", OptionList)
        found = actions.read(
            lambda: (
                services.interrupted_mock(),
                list_rounds([d for d in services.deck_dirs if d.is_dir()]),
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
            options.add_option(Option(shown(label), id=definition.round))
        options.add_option(Option(CODING_LABEL, id=CODING))
        if options.option_count:
            options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        from drill.tui.screens.mock_round import MockRoundScreen

        choice = event.option.id or ""
        services = self.services
        if services is None:
            return
        if choice in (CODING, RESUME_CODING):
            self._open_coding(resume=choice == RESUME_CODING)
            return
        if choice == RESUME:
            started = actions.read(services.resume_mock)
        else:
            started = actions.read(lambda: services.start_mock(choice))
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
        app.push_screen(CodingRoundScreen(session, self.slot))


def open_mock_round(app: DrillHost) -> None:
    """Entry point for the home screen's `m` key."""
    app.push_screen(MockPickerScreen(app.slot))
