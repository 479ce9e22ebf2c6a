"""The coding round: the contract beside a Python editor, notes, the phase clock, and grading.

Left: the prompt and contract, then a notes pane. Right: train.py in a TextArea with Python
highlighting (ctrl+e opens it in $EDITOR instead, the app suspended meanwhile). ctrl+r grades the
file against the current phase's checks in a worker thread (user code runs in subprocesses,
never in this process); the verdicts show below the editor, and each grading is recorded in the
run log. The pushback phase shows the round's hard cards above the contract (answer them in
the notes). The file and the notes are saved every few seconds, on ctrl+s, on every phase change
and on leaving.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from drill.mock.clock import PhaseAdvanced, PhaseAlarm, RoundFinished, Status
from drill.mock.coding import CONTRACT, grade
from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.report import clock as fmt_clock
from drill.tui.plain import PlainNotices, editable, joined, lines, shown

if TYPE_CHECKING:
    from drill.services import ServicesSlot

AUTOSAVE_S = 3.0


def reflow(text: str) -> str:
    """The contract for a narrow pane: a paragraph's (or a numbered item's) hard-wrapped lines
    joined, so the pane wraps them; indented blocks (the JSON example, the table) kept."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        plain = bool(prev.strip()) and not prev.startswith(" ") and not line.startswith(" ")
        item = re.match(r" {5}\S", line) and re.match(r" {2}\d\.| {5}\S", prev)
        if line.strip() and prev.strip() and (plain or item):
            out[-1] = f"{prev} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


def verdict_lines(result: dict) -> list[Content]:
    """One line per check and likely cause; the checks' words come from the user's run, so
    they are text, never markup (drill.tui.plain)."""
    rows = []
    for c in result["checks"]:
        mark = ("PASS", "green") if c["passed"] else ("FAIL", "red")
        rows.append(joined(mark, f" {c['name']}: {c['detail']}"))
    for cause in result["observations"].get("likely_causes", []):
        rows.append(joined(("likely cause:", "yellow"), f" {cause}"))
    return rows


class CodingRoundScreen(Screen[None]):
    DEFAULT_CSS = """
    CodingRoundScreen { layout: vertical; }
    #clock-bar { height: 1; padding: 0 1; background: $boost; }
    #clock-bar Static { width: auto; margin-right: 3; }
    #phase-clock.overrun { color: $error; text-style: bold reverse; }
    #split { height: 1fr; }
    #left { width: 2fr; }
    #contract { height: 2fr; padding: 0 1; }
    #pushback { display: none; padding-bottom: 1; }
    #pushback.shown { display: block; }
    #notes { height: 1fr; }
    #right { width: 3fr; }
    #editor { height: 2fr; }
    #verdicts { height: 1fr; padding: 0 1; border-top: solid $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Essential keys first and short, so that all of them fit an 80-column footer.
        Binding("ctrl+r", "grade", "Grade", priority=True),
        Binding("ctrl+g", "grade", "Grade", show=False, priority=True),
        Binding("f3", "next_phase", "Next phase", priority=True),
        Binding("f10", "end_round", "End", priority=True),
        Binding("f2", "toggle_pause", "Pause", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+e", "external_editor", "Editor", priority=True),
        Binding("f4", "model_answer", "Model answer", show=False, priority=True),
    ]

    def __init__(self, session: CodingSession, slot: ServicesSlot, *, tick_s: float = 0.25) -> None:
        super().__init__()
        self.session = session
        self.slot = slot  # decks (pushback cards), the run log and the review schedule
        self.tick_s = tick_s
        self.cancel = threading.Event()
        self.grading = False
        self._pending: tuple[str, ...] | None = None
        self.code = session.code()
        self.notes = session.notes()

    def compose(self) -> ComposeResult:
        with Horizontal(id="clock-bar"):
            yield Static("", id="phase-name")
            yield Static("", id="phase-clock")
            yield Static("", id="total-clock")
            yield Static("", id="run-state")
        with Horizontal(id="split"):
            with Vertical(id="left"):
                with VerticalScroll(id="contract"):
                    yield Static("", id="pushback")
                    yield Static(reflow(CONTRACT), markup=False, id="contract-text")
                yield TextArea(editable(self.notes), id="notes", soft_wrap=True)
            with Vertical(id="right"):
                yield TextArea.code_editor(self.code, language="python", id="editor")
                with VerticalScroll(id="verdicts"):
                    yield Static("ctrl+r grades this phase's checks.", id="verdict-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#notes", TextArea).border_title = "Notes"
        editor = self.query_one("#editor", TextArea)
        editor.border_title = shown(self._script_label())  # a path: text, not markup
        editor.focus()  # type at once; tab moves to the notes
        if self.session.clock.total_used_s() > 0:
            self.notify("Round resumed where it was saved. F2 continues the clock.", timeout=6)
        else:
            self.session.clock.start()
        self._render_clock()
        self._maybe_pushback()
        self.set_interval(self.tick_s, self.tick_now)
        self.set_interval(AUTOSAVE_S, self.action_save)

    def _script_label(self) -> str:
        """train.py's path, shortened to DRILL_HOME/... when it lives there."""
        from drill.paths import drill_home

        try:
            return f"DRILL_HOME/{self.session.script.relative_to(drill_home())}"
        except ValueError:
            return str(self.session.script)

    def on_unmount(self) -> None:
        self.cancel.set()
        self.action_save()

    # --- clock ---------------------------------------------------------------------------------
    def tick_now(self) -> None:
        self._handle(self.session.clock.tick())

    def _handle(self, events: list) -> None:
        for event in events:
            if isinstance(event, PhaseAlarm):
                title = CODING_PHASES[event.phase].title
                self.notify(f"Time is up for: {title}", title="Phase alarm", severity="warning")
            elif isinstance(event, PhaseAdvanced):
                self.action_save()
                self._maybe_pushback()
                if event.reason == "auto":  # the phase's time is up: its checks run by themselves
                    self._start_grading(CODING_PHASES[event.previous].grades)
            elif isinstance(event, RoundFinished):
                self.action_save()
                self._start_grading(CODING_PHASES[-1].grades)  # at the end, everything runs
                self.notify("The round is over: all checks run now; F4 shows the model answer.")
        self._render_clock()

    def _render_clock(self) -> None:
        clock = self.session.clock
        phase = self.session.phase
        self.query_one("#phase-name", Static).update(
            shown(f"Phase {clock.phase + 1}/{len(CODING_PHASES)}: {phase.title}")
        )
        clock_text = self.query_one("#phase-clock", Static)
        clock_text.update(f"Phase {fmt_clock(clock.phase_remaining_s())}")
        clock_text.set_class(clock.phase_remaining_s() <= 0, "overrun")
        self.query_one("#total-clock", Static).update(
            f"Total {fmt_clock(clock.total_remaining_s())} left"
        )
        paused = clock.status is Status.PAUSED
        self.query_one("#run-state", Static).update("PAUSED (F2 resumes)" if paused else "")

    # --- pushback ------------------------------------------------------------------------------
    def _maybe_pushback(self) -> None:
        """In the pushback phase: ask the round's hard cards (chosen once, off the UI thread)."""
        if self.session.phase.id != "pushback" or self.session.finished:
            return
        if self.session.pushback:
            self._show_pushback(self.session.pushback)
        else:
            self._choose_pushback()

    @work(thread=True, exclusive=True, group="pushback")
    def _choose_pushback(self) -> None:
        from drill.mock.errors import MockError

        services = self.slot.ready
        if services is None:
            message = "No pushback cards: the decks have not loaded."
            self.app.call_from_thread(self.notify, message, severity="warning")
            return
        try:
            cards = services.pushback_cards(self.session)
        except (MockError, OSError, ValueError) as error:
            message = f"No pushback cards: {error}"
            self.app.call_from_thread(self.notify, message, severity="warning")
            return
        self.app.call_from_thread(self._show_pushback, cards)

    def _show_pushback(self, cards: list[dict]) -> None:
        if not cards:
            return
        head = ("Pushback: the interviewer asks (answer in the notes)", "b")
        questions = [f"{i}. {c.get('text', '')}" for i, c in enumerate(cards, 1)]
        box = self.query_one("#pushback", Static)
        box.update(lines([head, *questions]))
        box.add_class("shown")
        self.query_one("#contract", VerticalScroll).scroll_home(animate=False)

    # --- actions -------------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.is_mounted:  # the widgets' text, also before their Changed messages arrive
            for area in self.query(TextArea):
                if area.id == "editor":
                    self.code = area.text
                elif area.id == "notes":
                    self.notes = area.text
        self.session.save(code=self.code, notes=self.notes)

    @on(TextArea.Changed, "#editor")
    def _code_changed(self, event: TextArea.Changed) -> None:
        self.code = event.text_area.text

    @on(TextArea.Changed, "#notes")
    def _notes_changed(self, event: TextArea.Changed) -> None:
        self.notes = event.text_area.text

    def action_toggle_pause(self) -> None:
        self._handle(self.session.clock.toggle_pause())

    def action_next_phase(self) -> None:
        self._handle(self.session.clock.advance())

    def action_end_round(self) -> None:
        self._handle(self.session.clock.finish())

    def action_model_answer(self) -> None:
        if not self.session.finished:
            self.notify("The model answer opens once the round is over (F10 ends it).")
            return
        from drill.tui.screens.model_answer import ModelAnswerScreen

        self.action_save()
        self.app.push_screen(ModelAnswerScreen(self.code))

    def action_external_editor(self) -> None:
        from drill.tui.editor import edit_externally

        self.action_save()
        notice = edit_externally(self.app, self.session.script)
        if notice is not None and notice.startswith("ctrl+e needs"):
            self.notify(notice)
            return
        if notice is not None:
            self.notify(notice, severity="error")
        self.query_one("#editor", TextArea).load_text(self.session.code())

    def action_grade(self) -> None:
        if self.grading:
            self.notify("Grading is already running.")
            return
        self._start_grading(self.session.phase.grades or ("skeleton",))

    def _start_grading(self, phases: tuple[str, ...]) -> None:
        """Grade now, or right after the grading that is running (the latest request wins)."""
        if not phases:
            return
        if self.grading:
            self._pending = phases
            return
        self.action_save()
        self.grading = True
        self.query_one("#verdict-text", Static).update(shown(f"Grading {', '.join(phases)} ..."))
        self._grade(phases)

    @work(thread=True, exclusive=True)
    def _grade(self, phases: tuple[str, ...]) -> None:
        out_dir = self.session.folder / "grades" / str(len(list(self._grades_dir())) + 1)
        try:
            result = grade(self.session.script, out_dir, phases=phases, cancel=self.cancel)
            rows = verdict_lines(dict(result))
            rows += self._record(dict(result), out_dir)
            if self.session.finished and not self.cancel.is_set():
                rows += self._feed_back()
            text = lines(rows)
        except Exception as error:
            text = joined(("grading failed:", "red"), f" {type(error).__name__}: {error}")
        self.app.call_from_thread(self._show_verdicts, text)

    def _record(self, result: dict, out_dir) -> list[Content]:
        """Record the grading in the run log; a notice line when that failed."""
        services = self.slot.ready
        if services is None:
            return [joined(("not recorded in the run log: the database did not load", "yellow"))]
        notices: list[str] = []
        services.record_grading(result, out_dir, notices.append)
        return [joined((n, "yellow")) for n in notices]

    def _feed_back(self) -> list[Content]:
        """Rate the failed checks' cards once the round is over (the text rounds' feedback)."""
        from drill.mock.errors import MockError

        services = self.slot.ready
        not_fed = ("not fed back to review:", "yellow")
        if services is None:
            return [joined(not_fed, " the database did not load")]
        try:
            rated = services.feed_back_coding(self.session)
        except (MockError, OSError) as error:
            return [joined(not_fed, f" {error}")]
        fed = [joined(("Fed back to review (Again):", "bold"), " " + ", ".join(rated))]
        return [*(fed if rated else []), joined("F4: your code beside the model answer.")]

    def _grades_dir(self):
        folder = self.session.folder / "grades"
        return folder.iterdir() if folder.is_dir() else iter(())

    def _show_verdicts(self, text: Content) -> None:
        self.grading = False
        self.query_one("#verdict-text", Static).update(text)
        pending, self._pending = self._pending, None
        if pending is not None:
            self._start_grading(pending)


class CodingApp(PlainNotices[None]):
    TITLE = "drill mock coding"

    def __init__(self, session: CodingSession, slot: ServicesSlot) -> None:
        super().__init__()
        self.session = session
        self.slot = slot

    def on_mount(self) -> None:
        self.push_screen(CodingRoundScreen(self.session, self.slot))
