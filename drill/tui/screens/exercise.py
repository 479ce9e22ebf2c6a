"""One exercise: the task and its hints beside a Python editor, the verdict below.

ctrl+r saves and checks the file in a worker thread (the checker runs in subprocesses; typing goes
on meanwhile); the verdict lists each check with its evidence. F1 shows the next hint, F4 the
model answer beside your file (after a check), ctrl+e opens the file in $EDITOR. The screen
renders and forwards keys; drill.exercises.service decides. It dismisses with the rating given
to the linked card when this visit solved the exercise (None otherwise).
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from drill import actions
from drill.exercises.progress import Progress
from drill.exercises.service import RATING_NAMES, ExerciseInfo, ExerciseService, RateCard
from drill.tui.plain import Part, joined, lines, shown
from drill.tui.screens.coding_round import verdict_lines


class ExerciseScreen(Screen[int | None]):
    DEFAULT_CSS = """
    ExerciseScreen #ex-title { height: 1; padding: 0 1; background: $boost; text-style: bold; }
    ExerciseScreen #ex-split { height: 1fr; }
    ExerciseScreen #ex-left { width: 2fr; }
    ExerciseScreen #ex-task { height: 1fr; padding: 0 1; }
    ExerciseScreen #ex-verdict { height: 1fr; padding: 0 1; border-top: solid $primary; }
    ExerciseScreen #ex-editor { width: 3fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "check", "Check", priority=True),
        Binding("f1", "hint", "Hint", priority=True),
        Binding("f4", "solution", "Solution", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+e", "external_editor", "Editor", priority=True),
        # priority: the code editor would take escape to move focus, and "esc Back" would
        # seem to do nothing
        Binding("escape", "leave", "Back", priority=True),
    ]

    def __init__(self, service: ExerciseService, name: str, rate: RateCard | None = None) -> None:
        super().__init__()
        self.service = service
        spec = service.spec(name)
        # the progress and the file come in on_mount: the constructor touches no database
        self.info = ExerciseInfo(spec, Progress(spec.name), service.user_file(name))
        self.path = self.info.path
        self.code: str | None = None  # None until the file is read: nothing to save yet
        self.rate = rate
        self.checking = False
        self.rated: int | None = None
        self.cancel = threading.Event()
        self.hints: list[str] = []

    def compose(self) -> ComposeResult:
        spec = self.info.spec
        yield Static(shown(f"Exercise · {spec.title}"), id="ex-title")
        with Horizontal(id="ex-split"):
            with Vertical(id="ex-left"):
                with VerticalScroll(id="ex-task"):
                    yield Static(self._task_text(), id="ex-task-text")
                with VerticalScroll(id="ex-verdict"):
                    yield Static("", id="ex-verdict-text")
            yield TextArea.code_editor("", language="python", id="ex-editor")
        yield Footer()

    def on_mount(self) -> None:
        """Opening the exercise starts it: the starter is copied unless the file exists, and
        the database records the start. A database that cannot be written or read gives a
        notice; the file is there all the same (the copy comes before the write)."""
        name = self.info.name
        started = actions.write(lambda: self.service.start(name))
        if not started.ok:
            self.notify(str(started.notice), severity="error", timeout=8)
        read = actions.read(lambda: self.service.progress(name))
        if read.ok and read.value is not None:
            self.info = ExerciseInfo(self.info.spec, read.value, self.path)
        elif not read.ok and started.ok:  # one notice is enough for one broken database
            self.notify(str(read.notice), severity="error", timeout=8)
        self.hints = list(self.info.spec.hints[: self.info.progress.hints_shown])
        self.code = self.path.read_text()
        editor = self.query_one("#ex-editor", TextArea)
        editor.load_text(self.code)
        editor.border_title = shown(self.info.spec.file)
        editor.focus()
        self.query_one("#ex-task-text", Static).update(self._task_text())
        self.query_one("#ex-verdict-text", Static).update(shown(self._status_line()))

    def on_unmount(self) -> None:
        self.cancel.set()
        self.action_save()

    def _task_text(self) -> Content:
        spec = self.info.spec
        rows: list[Part] = [spec.summary, "", ("Checks", "b")]
        rows += [f"· {name}: {text}" for name, text in spec.checks]
        for i, hint in enumerate(self.hints, 1):
            rows += ["", joined((f"Hint {i}/{len(spec.hints)}:", "yellow"), f" {hint}")]
        where = "one process" if not spec.world_size else f"{spec.world_size} ranks on gloo"
        rows += ["", (f"Runs as {where}, deadline {spec.timeout_s:.0f} s.", "dim")]
        return lines(rows)

    def _status_line(self) -> str:
        return f"Status: {self.info.status}. ctrl+r checks your file; F1 shows a hint."

    # --- actions ---------------------------------------------------------------------------
    @on(TextArea.Changed, "#ex-editor")
    def _changed(self, event: TextArea.Changed) -> None:
        self.code = event.text_area.text

    def action_save(self) -> None:
        if self.code is not None and self.path.read_text() != self.code:
            self.path.write_text(self.code)

    def action_hint(self) -> None:
        shown = actions.write(lambda: self.service.next_hint(self.info.name))
        if not shown.ok or shown.value is None:
            self.notify(str(shown.notice), severity="error", timeout=8)
            return
        number, text = shown.value
        if number > len(self.hints):
            self.hints.append(text)
        self.query_one("#ex-task-text", Static).update(self._task_text())
        self.query_one("#ex-task", VerticalScroll).scroll_end(animate=False)

    def action_solution(self) -> None:
        from drill.exercises.service import ExerciseError
        from drill.tui.screens.model_answer import ModelAnswerScreen

        self.action_save()
        try:
            found = actions.write(lambda: self.service.solution(self.info.name))
        except ExerciseError as error:
            self.notify(str(error))
            return
        if not found.ok or found.value is None:
            self.notify(str(found.notice), severity="error", timeout=8)
            return
        answer = found.value
        self.app.push_screen(ModelAnswerScreen(self.code or "", answer, self.info.spec.file))

    def action_external_editor(self) -> None:
        from drill.tui.editor import edit_externally

        self.action_save()
        notice = edit_externally(self.app, self.path)
        if notice is not None:
            self.notify(notice)
            return
        self.query_one("#ex-editor", TextArea).load_text(self.path.read_text())

    def action_check(self) -> None:
        if self.checking:
            self.notify("The check is already running.")
            return
        self.action_save()
        self.checking = True
        self.query_one("#ex-verdict-text", Static).update("Checking ... (you can keep typing)")
        self._check()

    @work(thread=True, exclusive=True)
    def _check(self) -> None:
        try:
            outcome = self.service.check(self.info.name, cancel=self.cancel, rate=self.rate)
            result: dict[str, Any] = dict(outcome.result)
            passed = sum(c["passed"] for c in result["checks"])
            counts = f"{passed}/{len(result['checks'])} checks pass"
            took = f" ({result['duration_s']:.1f} s)"
            head = (joined(("Solved", "green"), f": {counts}{took}") if outcome.solved
                    else joined((counts, "red"), f" · F1 hint{took}"))  # fmt: skip
            rows = [head, *verdict_lines(result)]
            if outcome.rating is not None:
                cards = ", ".join(outcome.rated_cards)
                noun = "Card" if len(outcome.rated_cards) == 1 else "Cards"
                rated = (f"{noun} rated {RATING_NAMES[outcome.rating]}:", "b")
                rows.append(joined(rated, f" {cards}"))
                self.rated = outcome.rating
            rows += [joined((n, "yellow")) for n in outcome.notices]
            text = lines(rows)
        except Exception as error:
            text = joined(("check failed to run:", "red"), f" {type(error).__name__}: {error}")
        self.app.call_from_thread(self._show, text)

    def _show(self, text: Content) -> None:
        self.checking = False
        self.query_one("#ex-verdict-text", Static).update(text)

    def action_leave(self) -> None:
        self.action_save()
        self.dismiss(self.rated)
