"""Home screen `m`: pick a mock round (or resume an interrupted one) and play it.

The standard round is the coding round (write train.py, graded by what it does), first and
highlighted, in the app's editor or in a notebook; then any interrupted round to resume; then the
text rounds, the talk-only practice. The rounds themselves are drill/tui/screens/coding_round.py
and mock_round.py; this is only the chooser and the set-up call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill import guarded_db
from drill.tui.plain import shown

if TYPE_CHECKING:
    from drill.mock.coding.session import CodingSession
    from drill.services import Services, ServicesSlot
    from drill.tui.host import DrillHost

RESUME = "resume"
RESUME_CODING = "resume:coding"
CODING = "coding:new"  # not a round-file id (those have no colon)
NOTEBOOK = "coding:notebook"
CODING_LABEL = "Standard round — write train.py, graded under torchrun"
NOTEBOOK_LABEL = "Standard round in a notebook — edit round.ipynb in Jupyter or VS Code"


class MockPickerScreen(ModalScreen[None]):
    """A list of round definitions, plus 'resume' when a round was interrupted."""

    DEFAULT_CSS = """
    MockPickerScreen { align: center middle; }
    #picker { width: 96; max-width: 100%; height: auto; max-height: 80%; border: round $primary;
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
        found = guarded_db.read(
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
        options.add_option(Option(CODING_LABEL, id=CODING))
        options.add_option(Option(NOTEBOOK_LABEL, id=NOTEBOOK))
        if unfinished is not None and unfinished[0] == "coding":
            self.coding_session = unfinished[1]
            kind = "notebook" if unfinished[1].notebook_path is not None else "coding"
            label = f"Resume interrupted {kind} round #{unfinished[1].round_id}"
            options.add_option(Option(label, id=RESUME_CODING))
        elif unfinished is not None:
            label = f"Resume interrupted talk-only round #{unfinished[1]}"
            options.add_option(Option(label, id=RESUME))
        for definition, _path in rounds:
            label = f"{definition.title} · {len(definition.phases)} phases"
            options.add_option(Option(shown(label), id=definition.round))
        options.highlighted = 0  # the standard round: enter starts it
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        from drill.tui.screens.mock_round import MockRoundScreen

        choice = event.option.id or ""
        services = self.services
        if services is None:
            return
        if choice in (CODING, NOTEBOOK, RESUME_CODING):
            self._open_coding(resume=choice == RESUME_CODING, notebook=choice == NOTEBOOK)
            return
        if choice == RESUME:
            started = guarded_db.read(services.resume_mock)
        else:
            started = guarded_db.read(lambda: services.start_mock(choice))
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

    def _open_coding(self, *, resume: bool, notebook: bool = False) -> None:
        from drill.mock.coding.session import CodingSession, default_rounds_dir
        from drill.mock.errors import MockError
        from drill.tui.screens.coding_round import CodingRoundScreen

        if resume and self.coding_session is not None:
            session = self.coding_session
        else:
            try:
                session = CodingSession.create(default_rounds_dir(), notebook=notebook)
            except (OSError, MockError) as error:
                why = getattr(error, "strerror", None) or error
                self.notify(f"Could not set the round up: {why}", severity="error")
                return
        app = self.app
        self.dismiss()
        app.push_screen(CodingRoundScreen(session, self.slot))
        if session.notebook_path is not None:
            app.notify(
                f"Notebook: {session.notebook_path}. Open it in Jupyter or VS Code; drill keeps "
                "the clock and reads each save.",
                title="Standard round in a notebook",
                timeout=20,
            )


def open_mock_round(app: DrillHost) -> None:
    """Entry point for the home screen's `m` key."""
    app.push_screen(MockPickerScreen(app.slot))
