"""The pushback's follow-ups on the clock: one question at a time, its own timer, the answer typed
in the box beside it (drill.mock.coding.followup_clock holds the rules). ctrl+s submits; when the
question's time is up, what was typed is kept and the next one starts. Each answer goes into the
notes under its `## Q<n>` heading, where the report reads it. The screen closes after the last
question, or when the round is over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static, TextArea

from drill.mock.clock import Status
from drill.mock.coding.followup_clock import (
    Answered,
    FollowUpClock,
    adopt_probe,
    answer_into_notes,
    per_question_seconds,
    requote,
)
from drill.mock.coding.pushback import answers
from drill.mock.report import clock as fmt_clock
from drill.tui.plain import joined, shown

if TYPE_CHECKING:
    from drill.mock.coding.session import CodingSession

WARN_S = 30.0  # the question's clock turns yellow in its last half minute


class FollowUpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    FollowUpScreen { align: right middle; }
    #followup { width: 60%; min-width: 60; height: 90%; background: $panel; padding: 0 1;
                border: round $accent; }
    #followup-head { height: 1; text-style: bold; }
    #followup-number { width: auto; }
    #followup-clock { width: auto; margin-left: 2; }
    #followup-clock.warning { color: $warning; text-style: bold; }
    #followup-question { height: auto; margin: 1 0; }
    #followup-answer { height: 1fr; }
    #followup-help { height: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Submit answer", priority=True),
    ]

    def __init__(
        self,
        asked: FollowUpClock,
        on_answer: Callable[[Answered], None],
        round_over: Callable[[], bool] = lambda: False,
        round_paused: Callable[[], bool] = lambda: False,
        tick_s: float = 0.25,
    ) -> None:
        super().__init__()
        self.asked = asked
        self.on_answer = on_answer
        self.round_over = round_over
        self.round_paused = round_paused
        self.tick_s = tick_s

    def compose(self) -> ComposeResult:
        with Vertical(id="followup"):
            with Horizontal(id="followup-head"):
                yield Static("", id="followup-number")
                yield Static("", id="followup-clock")
            yield Static("", id="followup-question")
            yield TextArea("", id="followup-answer", soft_wrap=True)
            yield Static(
                "Type your answer; ctrl+s submits it. When the time is up, what you typed is "
                "kept and the next question starts. Answers go to notes.md.",
                id="followup-help",
            )
        yield Footer()

    def on_mount(self) -> None:
        self.asked.start()
        self._show_question()
        self.set_interval(self.tick_s, self.tick_now)

    def tick_now(self) -> None:
        if self.asked.finished:
            return
        if self.round_over():  # the round ended: keep what was typed, and close
            self._answered(self.asked.submit(self._typed()))
            return
        if self.round_paused():
            self.asked.pause()
        else:
            self.asked.start()
        for done in self.asked.tick(self._typed()):
            self.notify(f"Time is up for Q{done.number}: the next question.", severity="warning")
            self._answered(done)
        self._render_clock()

    def action_submit(self) -> None:
        self._answered(self.asked.submit(self._typed()))

    def _typed(self) -> str:
        return self.query_one("#followup-answer", TextArea).text

    def _answered(self, done: Answered | None) -> None:
        if done is not None:
            self.on_answer(done)
        if self.asked.finished:
            if self.is_current:
                self.dismiss(None)
            return
        self._show_question()

    def _show_question(self) -> None:
        total = len(self.asked.questions)
        self.query_one("#followup-number", Static).update(
            shown(f"Follow-up Q{self.asked.number} of {total}")
        )
        self.query_one("#followup-question", Static).update(shown(self.asked.question))
        area = self.query_one("#followup-answer", TextArea)
        area.load_text("")
        area.focus()
        self._render_clock()

    def _render_clock(self) -> None:
        left = self.asked.remaining_s()
        paused = " (paused)" if self.asked.paused else ""
        clock = self.query_one("#followup-clock", Static)
        clock.update(joined(f"{fmt_clock(left)} left on this question{paused}"))
        clock.set_class(left <= WARN_S, "warning")


def ask_on_the_clock(
    round_screen: Screen,
    session: CodingSession,
    questions: list[dict],
    notes: TextArea,
    on_change: Callable[[list[dict]], None] | None = None,
) -> bool:
    """Push the follow-ups one at a time over the round's screen (from the first one not yet
    answered in the notes; not twice); each answer is written into the notes, and when it
    draws a probe (the next question builds on it) `on_change` gets the new questions. False
    when none is left to ask."""
    app = round_screen.app
    if any(isinstance(screen, FollowUpScreen) for screen in app.screen_stack):
        return True
    budget = session.clock.budgets_s[session.pushback_index]
    asked = FollowUpClock(
        questions,
        per_question_seconds(budget, len(questions)),
        session.now,
        answered=answers(notes.text, len(questions)),
    )
    if asked.finished:
        return False

    def write(done: Answered) -> None:
        text = answer_into_notes(notes.text, asked.questions, done)
        probe = adopt_probe(session, asked, done.number)  # the next question builds on it
        if probe is not None:
            text = requote(text, done.number + 1, probe)
        notes.load_text(text)
        session.save(notes=notes.text)
        if probe is not None and on_change is not None:
            on_change(session.pushback)

    app.push_screen(
        FollowUpScreen(
            asked,
            write,
            round_over=lambda: session.finished,
            round_paused=lambda: session.clock.status is Status.PAUSED,
        )
    )
    return True
