"""One exercise: the task and its hints beside a Python editor, the verdict below.

ctrl+r saves and checks the file in a worker thread (the checker runs in subprocesses; typing goes
on meanwhile); the verdict lists each check with its evidence. F1 shows the next hint, F4 the
model answer beside your file (after a check), ctrl+e opens the file in $EDITOR. The screen
renders and forwards keys; drill.exercises.service decides. It dismisses with the rating given
to the linked card when this visit solved the exercise (None otherwise).

The file is a drill.watched_file.WatchedFile, as the coding round's train.py is: read through
the bounded non-blocking reader (a FIFO, a directory, a link to a device or a huge file is
refused with a notice and the editor stays read-only; bytes that are not UTF-8 are shown
decoded, with a notice, and written back only once edited), watched for saves made elsewhere
(reloaded when the editor has no unsaved edits, else the user chooses: ctrl+l loads the file,
ctrl+s keeps the editor's), and never written over a newer file: escape, ctrl+r, F4 and ctrl+e
save first, and stop to say so when the disk changed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from drill import guarded_db
from drill.exercises.progress import Progress
from drill.exercises.service import ExerciseInfo, ExerciseService, RateCard
from drill.tui.code_editor import (
    CodeEditor,
    VerdictPlaces,
    go_to_line,
    reload_text,
    toggle_zoom,
    verdict_keys,
)
from drill.tui.editor import tell_change
from drill.tui.plain import Part, joined, lines, shown
from drill.tui.rated import announce_rated
from drill.tui.screens.coding_round import verdict_lines
from drill.watched_file import Change, WatchedFile

MAX_FILE_BYTES = 4 * 1024**2  # an exercise file written by hand: far below this
WATCH_S = 1.0  # how often the file is looked at (a stat) for saves made elsewhere


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
        # named under the verdict (drill.tui.code_editor.verdict_keys): no room at 80 columns
        Binding("ctrl+o", "go_to_line", "Go to line", show=False, priority=True),
        Binding("f5", "zoom_verdict", "Zoom", show=False, priority=True),
        Binding("ctrl+l", "load_file", "Load file", show=False, priority=True),
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
        self.file = WatchedFile(self.path, MAX_FILE_BYTES)
        self.code: str | None = None  # None until the file is read: nothing to save yet
        self.leave_unsaved = False  # escape was told why it stayed: the next one leaves
        self.rate = rate
        self.checking = False
        self.rated: int | None = None
        self.cancel = threading.Event()
        self.hints: list[str] = []
        self.places = VerdictPlaces()  # the file:line places the verdict names

    def compose(self) -> ComposeResult:
        spec = self.info.spec
        yield Static(shown(f"Exercise · {spec.title}"), id="ex-title")
        with Horizontal(id="ex-split"):
            with Vertical(id="ex-left"):
                with VerticalScroll(id="ex-task"):
                    yield Static(self._task_text(), id="ex-task-text")
                with VerticalScroll(id="ex-verdict"):
                    yield Static("", id="ex-verdict-text")
            yield CodeEditor.code_editor("", language="python", soft_wrap=True, id="ex-editor")
        yield Footer(show_command_palette=False)  # every key fits at 80 columns (ctrl+p works)

    def on_mount(self) -> None:
        """Opening the exercise starts it: the starter is copied unless the file exists, and
        the database records the start. A database that cannot be written or read gives a
        notice; the file is there all the same (the copy comes before the write)."""
        name = self.info.name
        started = guarded_db.write(lambda: self.service.start(name))
        if not started.ok:
            self.notify(str(started.notice), severity="error", timeout=8)
        read = guarded_db.read(lambda: self.service.progress(name))
        if read.ok and read.value is not None:
            self.info = ExerciseInfo(self.info.spec, read.value, self.path)
        elif not read.ok and started.ok:  # one notice is enough for one broken database
            self.notify(str(read.notice), severity="error", timeout=8)
        self.hints = list(self.info.spec.hints[: self.info.progress.hints_shown])
        editor = self.query_one("#ex-editor", TextArea)
        editor.border_title = shown(self.info.spec.file)
        self._show_file(self.file.load())
        if self.file.notice is not None:
            self.notify(self.file.notice, severity="warning", timeout=10)
        editor.focus()
        self.query_one("#ex-task-text", Static).update(self._task_text())
        self.query_one("#ex-verdict-text", Static).update(shown(self._status_line()))
        self.set_interval(WATCH_S, self._watch)

    def on_unmount(self) -> None:
        self.cancel.set()
        if self.code is not None:  # never forced: a newer file on disk stays
            self.file.save(self.code)

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

    # --- the file: loaded, watched, saved (drill.watched_file) ------------------------------
    def _show_file(self, text: str | None) -> None:
        """Put the file's text in the editor (the cursor kept); None: it cannot be read, and
        the editor is read-only until it can."""
        editor = self.query_one("#ex-editor", TextArea)
        editor.read_only = text is None
        self.code = text
        if text is None:
            editor.load_text("")
            return
        reload_text(editor, text)

    def _shown(self) -> str | None:
        """The editor's text, also before its Changed message arrives; None: no file loaded."""
        if self.code is None or not self.is_mounted:
            return self.code
        self.code = self.query_one("#ex-editor", TextArea).text
        return self.code

    def _tell(self, change: Change | None) -> None:
        tell_change(self, change, self.info.spec.file, self._show_file)

    def _watch(self) -> None:
        shown = self._shown()
        self._tell(self.file.poll(shown if shown is not None else ""))

    def _saved(self, *, force: bool = False) -> bool:
        """Save before an action; False (and the user told why) when the disk changed or
        cannot be written: the action waits for the user's choice."""
        shown = self._shown()
        if shown is None:
            return True  # nothing was loaded, nothing to save
        change = self.file.save(shown, force=force) or self.file.pending()
        self._tell(change)
        return change is None or change.kind == "reloaded"

    def _readable(self) -> bool:
        if self.code is None:
            self.notify(f"{self.file.notice}: fix or remove the file.", severity="error")
        return self.code is not None

    def action_save(self) -> None:
        """ctrl+s: the editor's text wins, also over a change on disk the user was told of."""
        if self._saved(force=True):
            self.leave_unsaved = False

    def action_load_file(self) -> None:
        """ctrl+l: the file as it is on disk replaces the editor's text."""
        self._show_file(self.file.load())
        if self.code is None:
            self._readable()
        elif self.file.notice is not None:
            self.notify(self.file.notice, severity="warning", timeout=10)
        else:
            self.notify(f"Loaded {self.info.spec.file} from disk.")

    def action_hint(self) -> None:
        shown = guarded_db.write(lambda: self.service.next_hint(self.info.name))
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

        self._saved()  # the answer shows beside the editor's text, saved or not
        try:
            found = guarded_db.write(lambda: self.service.solution(self.info.name))
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

        if not self._readable() or not self._saved():
            return
        notice = edit_externally(self.app, self.path)
        if notice is not None:
            self.notify(notice)
            return
        self._show_file(self.file.load())  # saved before: the editor had nothing unsaved
        if self.code is None:
            self._readable()

    def action_check(self) -> None:
        if self.checking:
            self.notify("The check is already running.")
            return
        if not self._readable() or not self._saved():
            return  # the file on disk is not the editor's text: the user chooses first
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
            if outcome.changes:
                rows.append(joined(("Linked cards:", "b")))
                rows += [joined(f"  {change.describe()}") for change in outcome.changes]
            if outcome.rating is not None:
                self.rated = outcome.rating
            if outcome.rated_cards:  # home and the browser read them again
                self.app.call_from_thread(announce_rated, self.app, outcome.rated_cards)
            rows += [joined((n, "yellow")) for n in outcome.notices]
            text = lines(rows)
        except Exception as error:
            text = joined(("check failed to run:", "red"), f" {type(error).__name__}: {error}")
        self.app.call_from_thread(self._show, text)

    def _show(self, text: Content) -> None:
        self.checking = False
        file_name = Path(self.info.spec.file).name
        self.places.show(text.plain, file_name)
        keys = joined((verdict_keys(self.places, file_name), "dim"))
        self.query_one("#ex-verdict-text", Static).update(lines([text, "", keys]))

    def action_go_to_line(self) -> None:
        """ctrl+o: the editor at the next line of the file that the verdict names."""
        line = self.places.take()
        if line is not None:
            go_to_line(self.query_one("#ex-editor", TextArea), line)

    def action_zoom_verdict(self) -> None:
        toggle_zoom(self.query_one("#ex-verdict", VerticalScroll))

    def action_leave(self) -> None:
        """escape: save and go back; when the disk changed, stay and say so (reloaded: the
        file is shown; a conflict: ctrl+l or ctrl+s), and a second escape leaves unsaved."""
        if not self._saved() and not self.leave_unsaved:
            self.leave_unsaved = True
            self.notify("escape again leaves without saving the editor's text.", timeout=10)
            return
        self.dismiss(self.rated)
