"""The mock-round screen: phase countdown and total clock always visible, a TextArea per prompt.

A thin view over drill.mock.round.MockRun: it forwards typing and keys, ticks the clock a few times
a second and autosaves every few seconds (MockRun also saves on every phase change and pause).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from drill import guarded_db
from drill.mock.clock import Event, PhaseAdvanced, PhaseAlarm, RoundFinished, Status
from drill.mock.report import clock as fmt_clock
from drill.mock.report import round_title
from drill.mock.round import AUTOSAVE_EVERY_S, MockRun, RateCard
from drill.tui.plain import PlainNotices, editable, joined, shown

T = TypeVar("T")
F = TypeVar("F")

WARN_FRACTION = 0.2  # the phase clock turns yellow in the last fifth of its budget


class AnswerArea(TextArea):
    """A TextArea that knows which prompt it answers."""

    def __init__(self, prompt_id: int, text: str) -> None:
        # a saved answer comes from the database: loaded as printable text
        text = editable(text)
        super().__init__(text, id=f"answer-{prompt_id}", soft_wrap=True, show_line_numbers=False)
        self.prompt_id = prompt_id


class MockRoundScreen(Screen[None]):
    DEFAULT_CSS = """
    MockRoundScreen { layout: vertical; }
    #round-title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    #clock-bar { height: 1; padding: 0 1; background: $boost; }
    #clock-bar Static { width: auto; margin-right: 3; }
    #phase-clock.warning { color: $warning; text-style: bold; }
    #phase-clock.overrun { color: $error; text-style: bold reverse; }
    #run-state.paused { color: $warning; text-style: bold; }
    #focus { padding: 0 1; color: $text-muted; height: auto; }
    #prompts { height: 1fr; padding: 0 1; }
    .prompt-text { margin-top: 1; text-style: bold; }
    AnswerArea { height: 8; }
    #save-state { height: 1; padding: 0 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "toggle_pause", "Pause/resume", priority=True),
        Binding("f3", "next_phase", "Next phase", priority=True),
        Binding("ctrl+s", "save", "Save now", priority=True),
        Binding("f10", "end_round", "End round", priority=True),
    ]

    def __init__(
        self,
        run: MockRun,
        *,
        rate: RateCard | None = None,
        tick_s: float = 0.25,
        autosave_s: float = AUTOSAVE_EVERY_S,
        on_autosave: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__()
        self.run = run
        self.rate = rate
        self.tick_s = tick_s
        self.autosave_s = autosave_s
        self.on_autosave = on_autosave  # test/crash hook: called after every timed autosave
        self._shown_phase = -1
        self._failing: str | None = None  # the database notice shown last (shown once)
        self._confirming = False  # the end-early question is open: the screen waits for it

    def compose(self) -> ComposeResult:
        title = round_title(self.run.definition.title, self.run.clock.total_budget_s)
        yield Static(shown(title), id="round-title")
        with Horizontal(id="clock-bar"):
            yield Static("", id="phase-name")
            yield Static("", id="phase-clock")
            yield Static("", id="total-clock")
            yield Static("", id="run-state")
        yield Static("", id="focus")
        yield VerticalScroll(id="prompts")
        yield Static("", id="save-state")
        yield Footer()

    def on_mount(self) -> None:
        resumed = self.run.clock.total_used_s() > 0
        self._show_phase()
        if resumed:
            self.notify("Round resumed where it was saved. F2 continues the clock.", timeout=6)
        else:
            self._persist(self.run.start, [])
        self._render_clock()
        self.set_interval(self.tick_s, self.tick_now)
        self.set_interval(self.autosave_s, self.autosave_now)

    def on_unmount(self) -> None:
        # leaving the screen (quit, crash-free exit) keeps the typing
        self._persist(self.run.autosave, False)

    # --- timers --------------------------------------------------------------------------------
    def tick_now(self) -> None:
        if self._confirming:  # the clock runs on; its events are handled once the answer is in
            return
        self._drive(self.run.tick)

    def autosave_now(self) -> None:
        wrote = self._persist(self.run.autosave, False)
        if wrote:
            self.query_one("#save-state", Static).update("Answers saved.")
        if self.on_autosave is not None:
            self.on_autosave(wrote)

    # --- actions -------------------------------------------------------------------------------
    def action_toggle_pause(self) -> None:
        self._drive(self.run.toggle_pause)

    def action_next_phase(self) -> None:
        self._drive(self.run.advance)

    def action_save(self) -> None:
        if self._persist(self.run.autosave, None) is None:  # not saved: the notice says why
            return
        self.query_one("#save-state", Static).update("Answers saved.")

    def action_end_round(self) -> None:
        """Ending early is final (grading follows): asked first."""
        from drill.tui.screens.browser_dialogs import ConfirmScreen

        if self._confirming or self.run.finished:
            return
        self._drive(self.run.tick)  # the time left as of now (the time may just have run out)
        if self.run.finished:
            return
        self._confirming = True
        left = fmt_clock(self.run.clock.total_remaining_s())
        question = (
            f"End the round now, with {left} left? Grading follows and the round cannot be "
            "resumed. Prompts you have not answered are not rated."
        )
        self.app.push_screen(ConfirmScreen(question), self._end_round_answered)

    def _end_round_answered(self, end: bool | None) -> None:
        self._confirming = False
        self._drive(self.run.finish if end else self.run.tick)

    @on(TextArea.Changed)
    def _typed(self, event: TextArea.Changed) -> None:
        if isinstance(event.text_area, AnswerArea):
            self.run.set_answer(event.text_area.prompt_id, event.text_area.text)

    def _persist(self, call: Callable[[], T], failed: F) -> T | F:
        """Run a call that saves the round; an unusable database gives one notice (not one a
        tick) and `failed`, and the round goes on in memory."""
        done = guarded_db.write(call)
        if done.ok:
            self._failing = None
            return done.value  # type: ignore[return-value]  (ok: the call's own value)
        if done.notice != self._failing:
            self._failing = done.notice
            self.notify(str(done.notice), severity="error", timeout=8)
        return failed

    def _drive(self, call: Callable[[], list[Event]]) -> None:
        """Move the round's clock; when saving that move failed, the clock still moved in
        memory, so show the phase (or the grading) it is in now."""
        events = self._persist(call, None)
        if events is not None:
            self._handle(events)
        elif self.run.finished:
            self._to_grading("unsaved")
        else:
            self._show_phase()
            self._render_clock()

    # --- rendering -----------------------------------------------------------------------------
    def _handle(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, PhaseAlarm):
                title = self.run.definition.phases[event.phase].title
                self.notify(f"Time is up for: {title}", title="Phase alarm", severity="warning")
            elif isinstance(event, PhaseAdvanced):
                self._show_phase()
            elif isinstance(event, RoundFinished):
                self._to_grading(event.reason)
                return
        self._render_clock()

    def _show_phase(self) -> None:
        index = self.run.clock.phase
        if index == self._shown_phase:
            return
        self._shown_phase = index
        phase = self.run.definition.phases[index]
        self.query_one("#focus", Static).update(shown(phase.focus))
        container = self.query_one("#prompts", VerticalScroll)
        container.remove_children()
        widgets = []
        for number, prompt in enumerate(self.run.phase_prompts(index), start=1):
            source = (f"  card {prompt.card_id}", "dim") if prompt.card_id else ""
            text = joined(f"{number}. {prompt.text}", source)
            widgets.append(Static(text, classes="prompt-text"))
            widgets.append(AnswerArea(prompt.id, self.run.answers[prompt.id]))
        container.mount_all(widgets)
        if widgets:
            self.call_after_refresh(widgets[1].focus)

    def _render_clock(self) -> None:
        clock = self.run.clock
        phases = self.run.definition.phases
        self.query_one("#phase-name", Static).update(
            shown(f"Phase {clock.phase + 1}/{len(phases)}: {phases[clock.phase].title}")
        )
        remaining = clock.phase_remaining_s()
        phase_clock = self.query_one("#phase-clock", Static)
        phase_clock.update(f"Phase {fmt_clock(remaining)}")
        budget = clock.budgets_s[clock.phase]
        phase_clock.set_class(remaining <= 0 or clock.overrun(), "overrun")
        phase_clock.set_class(0 < remaining <= budget * WARN_FRACTION, "warning")
        self.query_one("#total-clock", Static).update(
            f"Total {fmt_clock(clock.total_remaining_s())} left"
        )
        paused = clock.status is Status.PAUSED
        state = self.query_one("#run-state", Static)
        state.update("PAUSED (F2 resumes)" if paused else "")
        state.set_class(paused, "paused")
        for area in self.query(AnswerArea):
            area.read_only = paused

    def _to_grading(self, reason: str) -> None:
        from drill.tui.screens.mock_report import GradingScreen

        if reason == "time":
            self.notify("Time is up: the round is over.", severity="warning")
        self.app.switch_screen(GradingScreen(self.run, rate=self.rate))


class MockApp(PlainNotices[None]):
    """A tiny app around one round: the round, then grading, then the report."""

    TITLE = "drill mock"

    def __init__(self, run: MockRun, *, rate: RateCard | None = None, **screen_options) -> None:
        super().__init__()
        self.run_ = run
        self.rate = rate
        self.screen_options = screen_options

    def on_mount(self) -> None:
        if self.run_.finished:
            from drill.tui.screens.mock_report import GradingScreen

            self.push_screen(GradingScreen(self.run_, rate=self.rate))
        else:
            self.push_screen(MockRoundScreen(self.run_, rate=self.rate, **self.screen_options))
