"""The coding round: the contract beside a Python editor, notes, the phase clock, and grading.

Left: the prompt and contract, then a notes pane. Right: train.py in a TextArea with Python
highlighting (soft-wrapped; f5 gives the focused pane, then the verdicts, the whole screen; ctrl+o
puts the editor on a train.py:LINE the verdicts name; ctrl+e opens the file in
$EDITOR, the app suspended meanwhile; a save from an IDE is picked up: the file is watched). In a
notebook round the editor is a panel instead: the user edits round.ipynb in Jupyter or VS Code,
and each save of it is read (its `%%writefile train.py` cell becomes train.py). ctrl+r grades
the file against the current phase's checks in a worker thread (user code runs in
subprocesses, never in this process); the verdicts show below the editor, and each grading is
recorded in the run log. Entering the pushback phase grades everything; the interviewer's
follow-up questions then come from that grading's evidence and the code (drill.mock.coding.
pushback), asked one at a time on their own clock (coding_followups). The end grades everything,
or shows the pushback's grading again when train.py has not changed since (drill.mock.coding.
regrade). The file and the notes are saved every few seconds, on ctrl+s, on every phase change
and on leaving (escape pauses the clock). After the end: f4 the model answer beside the code,
f8 the report per phase, f9 a stretch phase (a round left in one resumes there). Beside it:
coding_files (the files), coding_clock, coding_grading, coding_pushback and coding_text.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Footer, Static, TextArea

from drill.mock.clock import RoundClock, Status
from drill.mock.coding import grade
from drill.mock.coding.conductor import grade_round
from drill.mock.coding.pushback import pushback_questions
from drill.mock.coding.rules import (
    Alarm,
    Effect,
    Grade,
    Pushback,
    RoundConductor,
    RoundOver,
    StretchOver,
    StretchStarted,
)
from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import (
    Stretch,
    chosen,
    remaining_phases,
    stretch_phases,
    toggle_chosen,
)
from drill.mock.coding.stretch import contract as stretch_contract
from drill.tui.code_editor import CodeEditor, VerdictPlaces, go_to_line, toggle_zoom, verdict_keys
from drill.tui.plain import PlainNotices, editable, joined, lines, shown
from drill.tui.screens.coding_clock import ClockBar, remaining
from drill.tui.screens.coding_files import RoundFilesScreen
from drill.tui.screens.coding_followups import ask_on_the_clock
from drill.tui.screens.coding_grading import feed_back_rows, graded_text, record_in_run_log
from drill.tui.screens.coding_pushback import GRADING_FIRST, add_to_notes, asked_rows
from drill.tui.screens.coding_text import reflow, verdict_lines

if TYPE_CHECKING:
    from drill.services import ServicesSlot

__all__ = ["CodingApp", "CodingRoundScreen", "reflow", "remaining", "verdict_lines"]

AUTOSAVE_S = 3.0


class CodingRoundScreen(RoundFilesScreen):
    DEFAULT_CSS = """
    CodingRoundScreen { layout: vertical; }
    #clock-bar { height: 1; padding: 0 1; background: $boost; }
    #clock-bar Static { width: auto; margin-left: 2; }
    #clock-bar #phase-name {
        width: 1fr; margin-left: 0; text-wrap: nowrap; text-overflow: ellipsis;
    }
    #phase-clock.overrun { color: $error; text-style: bold reverse; }
    #split { height: 1fr; }
    #left { width: 2fr; }
    #contract { height: 2fr; padding: 0 1; }
    #pushback { display: none; padding-bottom: 1; }
    #pushback.shown { display: block; }
    #notes { height: 1fr; }
    #right { width: 3fr; }
    #editor { height: 2fr; }
    #notebook-panel { height: 2fr; padding: 0 1; border: round $primary; }
    #verdicts { height: 1fr; padding: 0 1; border-top: solid $primary; }
    CodingRoundScreen.full-editor #left { display: none; }
    CodingRoundScreen.full-editor #verdicts { display: none; }
    CodingRoundScreen.full-notes #right { display: none; }
    CodingRoundScreen.full-notes #contract { display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # The keys shown first are the essential ones, so that they fit an 80-column footer;
        # check_action shows each only while it does something.
        Binding("ctrl+r", "grade", "Grade", priority=True),
        Binding("ctrl+g", "grade", "Grade", show=False, priority=True),
        Binding("f3", "next_phase", "Next phase", priority=True),
        Binding("f10", "end_round", "End", priority=True),
        Binding("f2", "toggle_pause", "Pause", priority=True),
        Binding("f4", "model_answer", "Model answer", priority=True),
        Binding("f8", "report", "Report", priority=True),
        Binding("f9", "stretch", "Stretch", priority=True),
        Binding("f9", "choose_stretch", "Stretch", show=False, priority=True),  # during the round
        Binding("f5", "full_screen", "Zoom", priority=True),  # the focused pane, the verdicts
        # a verdict's file:line; named under the verdicts (no room in an 80-column footer)
        Binding("ctrl+o", "go_to_line", "Go to line", show=False, priority=True),
        Binding("escape", "leave", "Leave", priority=True),
        Binding("ctrl+s", "save", "Save", show=False, priority=True),
        Binding("ctrl+e", "external_editor", "Editor", show=False, priority=True),
        Binding("ctrl+l", "load_file", "Load file", show=False, priority=True),
    ]

    def __init__(self, session: CodingSession, slot: ServicesSlot, *, tick_s: float = 0.25) -> None:
        super().__init__(session)
        self.slot = slot  # the run log and the review schedule
        self.tick_s = tick_s
        self.cancel = threading.Event()
        self.grading = False
        self._pending: Grade | None = None
        self.rules = RoundConductor(session)  # the clock rules: what each clock event leads to
        self.places = VerdictPlaces()  # the train.py:LINE places the verdicts name

    @property
    def stretch(self) -> Stretch | None:
        """The stretch phase after the round, while one runs."""
        return self.rules.stretch

    @property
    def clock(self) -> RoundClock:
        """The clock that runs now: the stretch phase's, else the round's."""
        return self.rules.clock

    @property
    def over(self) -> bool:
        """The round is over and no stretch phase runs."""
        return self.rules.over

    # --- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield ClockBar(id="clock-bar")
        with Horizontal(id="split"):
            with Vertical(id="left"):
                with VerticalScroll(id="contract"):
                    yield Static("", id="pushback")
                    yield Static(
                        reflow(self.session.prompt.contract), markup=False, id="contract-text"
                    )
                yield TextArea(editable(self.notes), id="notes", soft_wrap=True)
            with Vertical(id="right"):
                if self.notebook is None:
                    yield CodeEditor.code_editor(
                        self.code, language="python", soft_wrap=True, id="editor"
                    )
                else:
                    yield Static("", id="notebook-panel")
                with VerticalScroll(id="verdicts"):
                    yield Static("ctrl+r grades this phase's checks.", id="verdict-text")
        yield Footer(show_command_palette=False)  # every key fits at 80 columns (ctrl+p works)

    def on_mount(self) -> None:
        notes = self.query_one("#notes", TextArea)
        notes.border_title = "Notes"
        if self.notebook is None:
            editor = self.query_one("#editor", TextArea)
            editor.border_title = shown(self._label(self.session.script))  # a path: text
            editor.read_only = self.script.text is None  # unreadable: said below
            editor.focus()  # type at once; tab indents here, shift+tab moves to the notes
            if self.script.notice is not None:
                self.notify(self.script.notice, severity="warning", timeout=10)
        else:
            self.query_one("#notebook-panel", Static).border_title = "Notebook"
            notes.focus()
            self._watch_notebook()
        if self.stretch is not None:
            self._show_contract(stretch_contract(self.stretch.phase_id))
            self.notify("Stretch phase resumed where it was saved. F2 continues the clock.")
        elif self.session.clock.total_used_s() > 0:
            self.notify("Round resumed where it was saved. F2 continues the clock.", timeout=6)
        else:
            self.session.clock.start()
        self._render_clock()
        self._maybe_pushback()
        self.set_interval(self.tick_s, self.tick_now)
        self.set_interval(AUTOSAVE_S, self.autosave)

    def autosave(self) -> None:
        """Save the stretch phase's clock (while one runs), the notes and train.py."""
        if self.stretch is not None:
            self.stretch.record()
        self.save_files()

    def on_unmount(self) -> None:
        self.cancel.set()
        self.autosave()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        over = self.over
        if action == "next_phase":
            return not self.session.finished
        if action in ("end_round", "toggle_pause"):
            return not over
        if action in ("model_answer", "report"):
            return over
        if action == "stretch":
            return over and bool(remaining_phases(self.session))
        if action == "choose_stretch":
            return not self.session.finished and bool(stretch_phases())
        return not (action in ("external_editor", "load_file") and self.notebook is not None)

    # --- clock ---------------------------------------------------------------------------------
    def tick_now(self) -> None:
        self._handle(self.clock.tick())
        if self.notebook is None:
            self._watch_script()
        else:
            self._watch_notebook()

    def _handle(self, events: list) -> None:
        """The clock's events: the editor's text saved first (an ended phase keeps train.py as
        it is on disk), then the round's rules applied (drill.mock.coding.rules)."""
        if events:
            self.autosave()
        effects = self.rules.react(events)
        for effect in effects:
            self._apply(effect, effects)
        self._render_clock()

    def _apply(self, effect: Effect, effects: list[Effect]) -> None:
        if isinstance(effect, Alarm):
            title = self.session.phases[effect.phase].title
            self.notify(f"Time is up for: {title}", title="Phase alarm", severity="warning")
        elif isinstance(effect, Pushback):
            self._maybe_pushback()  # grades everything: the questions need it
        elif isinstance(effect, Grade):
            self._start_grading(effect)
        elif isinstance(effect, RoundOver) and not any(
            isinstance(e, StretchStarted) for e in effects
        ):
            more = "; F9: a stretch phase" if remaining_phases(self.session) else ""
            self.notify(
                f"The round is over: {effect.grading}. F8: the report per phase; "
                f"F4: the model answer{more}."
            )
            self.refresh_bindings()
        elif isinstance(effect, StretchOver):
            self._show_contract(self.session.prompt.contract)
            self.notify(f"Stretch over: {effect.title}. Its checks run now; F8: the report.")
            self.refresh_bindings()
        elif isinstance(effect, StretchStarted):
            self._show_stretch(effect.phase_id)
            title = self.stretch.title if self.stretch is not None else effect.phase_id
            self.notify(f"Chosen up front, it starts now: stretch phase {title}.")

    def _begin_stretch(self, phase_id: str) -> None:
        self.rules.start_stretch(phase_id)
        self._show_stretch(phase_id)

    def _show_stretch(self, phase_id: str) -> None:
        self._show_contract(stretch_contract(phase_id))
        self._render_clock()
        self.refresh_bindings()
        if not self.grading:
            self.query_one("#verdict-text", Static).update(
                shown(f"ctrl+r grades the stretch phase's checks ({phase_id}).")
            )

    def _show_contract(self, text: str) -> None:
        self.query_one("#contract-text", Static).update(reflow(text))
        self.query_one("#pushback", Static).set_class(self.stretch is None, "shown")
        self.query_one("#contract", VerticalScroll).scroll_home(animate=False)

    def _render_clock(self) -> None:
        self.query_one(ClockBar).show(self.rules)

    # --- pushback ------------------------------------------------------------------------------
    def _maybe_pushback(self) -> None:
        """In the pushback phase: ask the round's follow-ups; when none are chosen yet and no
        full grading exists, grade everything first (the questions come from its evidence)."""
        if self.session.phase.id != "pushback" or self.session.finished:
            return
        questions = pushback_questions(self.session)
        if questions:
            self._ask(questions)
            return
        self._pushback_box(GRADING_FIRST)
        if self.grading and self._pending is None:
            self._pending = Grade(self.session.all_grader_phases)
        elif not self.grading:
            self._start_grading(Grade(self.session.all_grader_phases))

    def _after_grading(self) -> None:
        """No grading left to run: ask the follow-ups (from the full grading, else the code)."""
        if self.session.phase.id != "pushback" or self.session.finished or self.session.pushback:
            return
        self._ask(pushback_questions(self.session, from_code=True))

    def _ask(self, questions: list[dict]) -> None:
        self._show_asked(questions)
        notes = self.query_one("#notes", TextArea)
        if add_to_notes(notes, questions):
            self.notes = notes.text
            self.autosave()
        ask_on_the_clock(self, self.session, questions, notes, on_change=self._show_asked)

    def _show_asked(self, questions: list[dict]) -> None:
        """The box's questions (asked one at a time; one may build on the last answer)."""
        self._pushback_box(asked_rows(questions, self.session.pushback_from is not None))

    def _pushback_box(self, rows: Iterable) -> None:
        box = self.query_one("#pushback", Static)
        box.update(lines(rows))
        box.add_class("shown")
        self.query_one("#contract", VerticalScroll).scroll_home(animate=False)

    # --- actions -------------------------------------------------------------------------------
    def action_toggle_pause(self) -> None:
        self._handle(self.clock.toggle_pause())

    def action_next_phase(self) -> None:
        self._handle(self.session.clock.advance())

    def action_end_round(self) -> None:
        """f10: end the round, after asking when time is left."""
        from drill.tui.screens.browser_dialogs import ConfirmScreen

        if self.over:
            return
        left = remaining(self.clock.total_remaining_s())
        clock = self.clock

        def answered(yes: bool | None) -> None:
            if yes and clock is self.clock:
                self._handle(clock.finish())

        question = f"End the round now, with {left} left? Every check runs, and it is over."
        if self.stretch is not None:
            question = f"End the stretch phase now, with {left} left? Its checks run."
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_leave(self) -> None:
        """escape: leave the round, its clock paused and everything saved."""
        if not self.over and self.clock.status is Status.RUNNING:
            self._handle(self.clock.pause())
            self.app.notify("Coding round paused and saved: `drill mock resume` (or m) goes on.")
        self.autosave()
        self.dismiss()

    def action_full_screen(self) -> None:
        """f5: the focused pane (the editor, or the notes) alone, then the verdicts alone, then
        back to the split."""
        verdicts = self.query_one("#verdicts", VerticalScroll)
        if self.maximized is verdicts:
            toggle_zoom(verdicts)
            return
        if self.has_class("full-editor") or self.has_class("full-notes"):
            self.remove_class("full-editor", "full-notes")
            toggle_zoom(verdicts)
            return
        notes = self.query_one("#notes", TextArea)
        if self.focused is notes or self.notebook is not None:
            self.add_class("full-notes")
            notes.focus()
        else:
            self.add_class("full-editor")
            self.query_one("#editor", TextArea).focus()

    def action_go_to_line(self) -> None:
        """ctrl+o: the editor at the next line of train.py that the verdicts name."""
        line = self.places.take()
        if line is not None and self.notebook is None:
            self.remove_class("full-notes")
            if self.maximized is not None:
                self.minimize()
            go_to_line(self.query_one("#editor", TextArea), line)

    def action_model_answer(self) -> None:
        from drill.tui.screens.model_answer import ModelAnswerScreen

        if not self.session.finished:
            return
        self.autosave()
        answer = self.session.prompt.entry.model_answer()  # the round's prompt's model answer
        self.app.push_screen(ModelAnswerScreen(self.session.code(), answer))

    def action_stretch(self) -> None:
        """f9 after the round: pick a stretch phase and start its clock."""
        from drill.tui.screens.coding_stretch import StretchPickScreen

        phases = remaining_phases(self.session)
        if not self.over or not phases:
            return

        def picked(phase_id: str | None) -> None:
            if phase_id is None or not self.over:
                return
            self._begin_stretch(phase_id)

        self.app.push_screen(StretchPickScreen(phases, self.session.scale), picked)

    def action_choose_stretch(self) -> None:
        """f9 during the round: choose stretch phases up front (each press adds or drops one);
        they start one after another, in that order, when the round ends."""
        from drill.tui.screens.coding_stretch import StretchPickScreen

        if self.session.finished:
            return

        def picked(phase_id: str | None) -> None:
            if phase_id is None or self.session.finished:
                return
            order = toggle_chosen(self.session, phase_id)
            self.autosave()
            names = ", ".join(order) if order else "none"
            self.notify(f"Stretch phases after the round, in this order: {names}")

        screen = StretchPickScreen(list(stretch_phases()), self.session.scale, chosen(self.session))
        self.app.push_screen(screen, picked)

    def action_report(self) -> None:
        if self.session.finished:
            self.autosave()
            self._open_report()

    @work(thread=True, exclusive=True, group="report")
    def _open_report(self) -> None:
        from drill.mock.coding.report import build_report, to_markdown
        from drill.tui.screens.coding_report import CodingReportScreen

        text = to_markdown(build_report(self.session))
        self.app.call_from_thread(self.app.push_screen, CodingReportScreen(text))

    def action_grade(self) -> None:
        if self.grading:
            self.notify("Grading is already running.")
            return
        self._start_grading(self.rules.grade_now())

    def _start_grading(self, request: Grade) -> None:
        """Grade now, or right after the grading that is running (the latest request wins)."""
        if not request.phases:
            return
        if self.grading:
            self._pending = request
            return
        self.autosave()
        self.grading = True
        phases = ", ".join(request.phases)
        self.query_one("#verdict-text", Static).update(shown(f"Grading {phases} ..."))
        self._grade(request)

    @work(thread=True, exclusive=True)
    def _grade(self, request: Grade) -> None:
        graded = grade_round(
            self.session,
            request.phases,
            grader=self.session.grader(grade),
            record=lambda result, out_dir: record_in_run_log(self.slot, result, out_dir),
            cancel=self.cancel,
        )
        feed_back = request.feed_back and self.session.finished and not self.cancel.is_set()
        text = graded_text(
            graded,
            (lambda: feed_back_rows(self.slot, self.app, self.session)) if feed_back else None,
        )
        if not self.cancel.is_set():
            self.app.call_from_thread(self._show_verdicts, text)

    def _show_verdicts(self, text: Content) -> None:
        self.grading = False
        self.places.show(text.plain, self.session.script.name)
        name, zoom = self.session.script.name, "f5 twice: this pane alone (again: back)"
        text = lines([text, "", joined((verdict_keys(self.places, name, zoom), "dim"))])
        self.query_one("#verdict-text", Static).update(text)
        pending, self._pending = self._pending, None
        if pending is not None:
            self._start_grading(pending)
        else:
            self._after_grading()


class CodingApp(PlainNotices[None]):
    TITLE = "drill mock coding"

    def __init__(self, session: CodingSession, slot: ServicesSlot, *, intro: str = "") -> None:
        super().__init__()
        self.session = session
        self.slot = slot
        self.intro = intro  # what the command said on the terminal, which the app's screen hides

    def on_mount(self) -> None:
        self.push_screen(CodingRoundScreen(self.session, self.slot), lambda _: self.exit())
        if self.intro:
            self.notify(self.intro, title="drill mock", timeout=15)
