"""Home screen `m`: pick a mock round (or resume an interrupted one) and play it.

The standard round is the coding round (write train.py, graded by what it does), first and
highlighted, in the app's editor or in a notebook; then the coding round on each other prompt of
the catalogue (drill.mock.coding.catalogue: its title and length), the same two ways; then any
interrupted round to resume; then the text rounds, the talk-only practice. A line under the title
suggests the prompt whose topics are weakest by the readiness measure and says why
(drill.mock.coding.suggest; computed in a worker: it reads the decks and the database). The rounds
themselves are drill/tui/screens/coding_round.py and mock_round.py; this is only the chooser and
the set-up call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill import guarded_db
from drill.tui.plain import shown

if TYPE_CHECKING:
    from drill.mock.coding.catalogue import RoundPrompt
    from drill.mock.coding.session import CodingSession
    from drill.services import Services, ServicesSlot
    from drill.tui.host import DrillHost

RESUME = "resume"
RESUME_CODING = "resume:coding"
CODING = "coding:new"  # not a round-file id (those have no colon)
NOTEBOOK = "coding:notebook"
SUGGESTED = " · suggested"


def coding_id(prompt: str, *, notebook: bool = False) -> str:
    """The option id of a prompt's coding round: CODING / NOTEBOOK for today's DDP round,
    "coding:new:eval" / "coding:notebook:eval" for another prompt."""
    base = NOTEBOOK if notebook else CODING
    return base if prompt == "ddp" else f"{base}:{prompt}"


def coding_label(prompt: RoundPrompt, *, notebook: bool = False) -> str:
    """A prompt's option: its title and round length (the DDP round keeps its standard name),
    short enough for one row of an 80-column picker."""
    length = f"{prompt.minutes} min"
    if prompt.id == "ddp":
        if notebook:
            return f"Standard round in a notebook ({length}) — round.ipynb, Jupyter or VS Code"
        return f"Standard round: {prompt.title} ({length}) — train.py under torchrun"
    if notebook:
        return f"{prompt.title} in a notebook ({length}) — round.ipynb"
    return f"Coding round: {prompt.title} ({length}) — train.py under torchrun"


class MockPickerScreen(ModalScreen[None]):
    """A list of round definitions, plus 'resume' when a round was interrupted."""

    DEFAULT_CSS = """
    MockPickerScreen { align: center middle; }
    #picker { width: 96; max-width: 100%; height: auto; max-height: 80%; border: round $primary;
              background: $surface; padding: 0 1; }
    #picker-title { text-style: bold; }
    #picker-suggest { color: $text-muted; }
    #rounds { max-height: 12; }
    #picker-hint { color: $text-muted; padding-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Back")]

    def __init__(self, slot: ServicesSlot) -> None:
        super().__init__()
        self.slot = slot
        self.services: Services | None = None
        self.coding_session: CodingSession | None = None  # an interrupted one, when offered
        from drill.mock.coding.catalogue import catalogue

        self.prompts = catalogue()  # the coding round's prompts, DDP first
        self.suggested: str | None = None  # the prompt the readiness line suggests

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Mock round: pick one", id="picker-title")
            yield Static("Suggestion: reading readiness ...", id="picker-suggest")
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
        for prompt in self.prompts:
            for notebook in (False, True):
                label = shown(coding_label(prompt, notebook=notebook))
                options.add_option(Option(label, id=coding_id(prompt.id, notebook=notebook)))
        if unfinished is not None and unfinished[0] == "coding":
            self.coding_session = unfinished[1]
            kind = "notebook" if unfinished[1].notebook_path is not None else "coding"
            label = f"Resume interrupted {kind} round #{unfinished[1].round_id}"
            prompt = unfinished[1].prompt
            label += "" if prompt.id == "ddp" else f" ({prompt.title})"
            options.add_option(Option(shown(label), id=RESUME_CODING))
        elif unfinished is not None:
            label = f"Resume interrupted talk-only round #{unfinished[1]}"
            options.add_option(Option(label, id=RESUME))
        for definition, _path in rounds:
            label = f"{definition.title} · {len(definition.phases)} phases"
            options.add_option(Option(shown(label), id=definition.round))
        options.highlighted = 0  # the standard round: enter starts it
        options.focus()
        self._suggest(services)

    @work(thread=True, exclusive=True, group="suggest")
    def _suggest(self, services: Services) -> None:
        """The suggestion line: the weakest prompt by readiness (read in this worker), or why
        there is none; a failure to read it says so in the same line."""
        from drill.mock.coding.suggest import suggest_prompt

        try:
            topics = services.readiness().topics
        except Exception as error:  # the decks or the database: the picker works without it
            line, chosen = f"no suggestion: {type(error).__name__}: {error}", None
        else:
            suggestion = suggest_prompt(self.prompts, topics)
            line, chosen = suggestion.why, suggestion.prompt_id
        self.app.call_from_thread(self._show_suggestion, line, chosen)

    def _show_suggestion(self, line: str, chosen: str | None) -> None:
        self.suggested = chosen
        self.query_one("#picker-suggest", Static).update(shown(" ".join(line.split())))
        if chosen is None:
            return
        options = self.query_one("#rounds", OptionList)
        prompt = next(p for p in self.prompts if p.id == chosen)
        label = shown(coding_label(prompt) + SUGGESTED)
        options.replace_option_prompt(coding_id(chosen), label)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        from drill.tui.screens.mock_round import MockRoundScreen

        choice = event.option.id or ""
        services = self.services
        if services is None:
            return
        if choice == RESUME_CODING or choice.startswith((CODING, NOTEBOOK)):
            prompt = choice.rsplit(":", 1)[1] if choice.count(":") == 2 else "ddp"
            notebook = choice.startswith(NOTEBOOK)
            self._open_coding(resume=choice == RESUME_CODING, notebook=notebook, prompt=prompt)
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

    def _open_coding(self, *, resume: bool, notebook: bool = False, prompt: str = "ddp") -> None:
        from drill.mock.coding.session import CodingSession, default_rounds_dir
        from drill.mock.errors import MockError
        from drill.tui.screens.coding_round import CodingRoundScreen

        if resume and self.coding_session is not None:
            session = self.coding_session
        else:
            try:
                session = CodingSession.create(
                    default_rounds_dir(), notebook=notebook, prompt=prompt
                )
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
                title=shown(f"{session.prompt.title} in a notebook"),
                timeout=20,
            )


def open_mock_round(app: DrillHost) -> None:
    """Entry point for the home screen's `m` key."""
    app.push_screen(MockPickerScreen(app.slot))
