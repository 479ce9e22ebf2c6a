"""Grading and report screens of a mock round.

Grading: every prompt's rubric as a checklist, pre-checked where the typed answer covers the
bullet (drill.mock.coverage); the user flips bullets (space), then confirms (enter, ctrl+s) or
saves without rating any card (n); no card is rated before. Report: bands per phase
and overall, time used against budget, and the cards fed back into review.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Markdown, Static

from drill import guarded_db
from drill.mock.feedback import noting_changed
from drill.mock.report import RoundReport, clock
from drill.mock.round import MockRun, RateCard
from drill.text import printable
from drill.tui.plain import shown
from drill.tui.rated import announce_rated


class BulletBox(Checkbox):
    def __init__(self, prompt_id: int, index: int, label: str, value: bool) -> None:
        super().__init__(shown(label), value, id=f"bullet-{prompt_id}-{index}")
        self.prompt_id = prompt_id
        self.index = index

    @property  # type: ignore[override]
    def BUTTON_INNER(self) -> str:
        # Textual draws "X" in both states and tells them apart by colour only; a blank box for
        # unchecked keeps the checklist readable without colour.
        return "X" if self.value else " "


class GradingScreen(Screen[None]):
    DEFAULT_CSS = """
    #grading-title { height: 1; background: $primary; padding: 0 1; text-style: bold; }
    #grading { height: 1fr; padding: 0 1; }
    .phase-head { margin-top: 1; text-style: bold underline; }
    .prompt-text { margin-top: 1; text-style: bold; }
    .answer { color: $text-muted; padding-left: 2; }
    /* no focus border: on a one-row box it would cover the bullet's own text */
    BulletBox, BulletBox:focus { border: none; padding: 0; height: 1; margin-left: 2; }
    #save-grades { margin: 1 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "app.focus_previous", "Up", key_display="↑/k"),
        Binding("down,j", "app.focus_next", "Down", key_display="↓/j"),
        Binding("space", "flip", "Flip", priority=True),
        Binding("enter,ctrl+s", "save_grades", "Confirm and rate", priority=True),
        Binding("n", "save_unrated", "Do not rate"),
    ]

    def __init__(self, run: MockRun, *, rate: RateCard | None = None) -> None:
        super().__init__()
        self.run = run
        self.rate = rate

    def compose(self) -> ComposeResult:
        yield Static(
            f"Grade round {self.run.round_id}: check what your answer covered", id="grading-title"
        )
        coverage = self.run.coverage()
        clock_state = self.run.clock.state
        with VerticalScroll(id="grading"):
            for index, phase in enumerate(self.run.definition.phases):
                used, budget = clock_state.used_s[index], self.run.clock.budgets_s[index]
                head = shown(f"{phase.title}  ({clock(used)} used of {clock(budget)})")
                yield Static(head, classes="phase-head")
                for prompt in self.run.phase_prompts(index):
                    yield Static(shown(prompt.text), classes="prompt-text")
                    answer = self.run.answers[prompt.id].strip() or (
                        "(no answer typed: its card is not rated)"
                        if prompt.card_id
                        else "(no answer typed)"
                    )
                    yield Static(shown(answer), classes="answer")
                    for b, result in enumerate(coverage[prompt.id]):
                        hint = " (partly named)" if result.status == "partial" else ""
                        yield BulletBox(prompt.id, b, f"{result.bullet}{hint}", result.covered)
            yield Button("Confirm and rate (enter)", id="save-grades", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        boxes = self.query(BulletBox)
        if boxes:  # the keys move from the first bullet at once
            boxes.first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save-grades":
            self.action_save_grades()

    def checked(self) -> dict[int, list[bool]]:
        marks: dict[int, list[bool]] = {p.id: [False] * len(p.rubric) for p in self.run.prompts}
        for box in self.query(BulletBox):
            marks[box.prompt_id][box.index] = box.value
        return marks

    def action_flip(self) -> None:
        if isinstance(self.focused, BulletBox):
            self.focused.toggle()

    def action_save_unrated(self) -> None:
        """Save the grades and the report; no card is rated."""
        self.action_save_grades(rating=False)

    def action_save_grades(self, rating: bool = True) -> None:
        """Save the confirmed checklist; only now are the weak cards rated (space flips a
        bullet before)."""
        changed: list[str] = []
        rate = None if self.rate is None or not rating else noting_changed(self.rate, changed)
        graded = guarded_db.write(lambda: self.run.grade(self.checked(), rate=rate))
        announce_rated(self.app, changed)  # home and the browser read them again
        if graded.value is None:  # the grades stay on screen for another try
            self.notify(str(graded.notice), severity="error", timeout=8)
            return
        self.app.switch_screen(ReportScreen(graded.value))


class ReportScreen(Screen[None]):
    DEFAULT_CSS = """
    #report { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "close", "Close"),
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(self, report: RoundReport) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report"):
            yield Markdown(printable(self.report.to_markdown()))
        yield Footer()

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()
