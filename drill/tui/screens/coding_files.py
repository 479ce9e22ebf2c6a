"""The coding round screen's files: train.py in the editor, watched and saved (a save from an
IDE or $EDITOR is picked up), the notes pane's notes.md, and in a notebook round the panel that
follows round.ipynb's saves. drill.tui.screens.coding_round builds the round on this."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.screen import Screen
from textual.widgets import Static, TextArea

from drill.mock.coding.session import MAX_TEXT_BYTES, CodingSession
from drill.tui.code_editor import reload_text
from drill.tui.screens.coding_text import notebook_panel
from drill.watched_file import Change, Stamp, WatchedFile, stamp_of


class RoundFilesScreen(Screen[None]):
    """A coding round's files as the screen holds them (`code`, `notes`) and saves them."""

    def __init__(self, session: CodingSession) -> None:
        super().__init__()
        self.session = session
        self.notebook = session.notebook_path
        # train.py as last read or written here, watched (drill.watched_file, as exercises)
        self.script = WatchedFile(session.script, MAX_TEXT_BYTES)
        self.code = self.script.load() or ""
        self.notes = session.notes_file()  # notes.md: the app's pane edits it
        self._notebook_stamp: Stamp | None = None

    def _label(self, path: Path) -> str:
        """A path, shortened to DRILL_HOME/... when it lives there."""
        from drill.paths import drill_home

        try:
            return f"DRILL_HOME/{path.relative_to(drill_home())}"
        except ValueError:
            return str(path)

    def _widget_text(self) -> None:
        """The widgets' text, also before their Changed messages arrive."""
        if not self.is_mounted:
            return
        for area in self.query(TextArea):
            if area.id == "editor":
                self.code = area.text
            elif area.id == "notes":
                self.notes = area.text

    def save_files(self, *, force: bool = False) -> None:
        """Save the notes and the clock, and train.py when the editor changed it: never over a
        newer file unless `force` (then the user chooses, see _watch_script)."""
        self._widget_text()
        if self.notebook is None and self.is_mounted:
            self._tell(self.script.save(self.code, force=force))
        self.session.save(notes=self.notes)

    def action_save(self) -> None:
        """ctrl+s: the editor's train.py wins, also over a change on disk the user was told
        of."""
        self.save_files(force=True)

    def _watch_script(self) -> None:
        """Pick up a save of train.py made outside (an IDE, $EDITOR): reloaded when the editor
        has no unsaved edits, else the user is told and chooses (ctrl+l or ctrl+s)."""
        self._tell(self.script.poll(self.query_one("#editor", TextArea).text))

    def _tell(self, change: Change | None) -> None:
        from drill.tui.editor import tell_change

        tell_change(self, change, self.session.script.name, self._load)

    def _load(self, text: str | None) -> None:
        editor = self.query_one("#editor", TextArea)
        editor.read_only = text is None
        reload_text(editor, text or "")
        self.code = text or ""

    def action_load_file(self) -> None:
        """ctrl+l: replace the editor's text by train.py as it is on disk."""
        self._load(self.script.load())
        self.notify(self.script.notice or "Loaded train.py from disk.")

    def _watch_notebook(self) -> None:
        stamp = stamp_of(self.notebook)
        if stamp == self._notebook_stamp:
            return
        self._notebook_stamp = stamp
        self._sync_notebook()

    @work(thread=True, exclusive=True, group="notebook")
    def _sync_notebook(self) -> None:
        problem = self.session.sync_from_notebook()
        self.app.call_from_thread(self._show_notebook, problem)

    def _notebook_label(self) -> str:
        return str(self.notebook)  # whole: the user opens it in another program

    def _show_notebook(self, problem: str | None) -> None:
        panel = notebook_panel(self.notebook, self._notebook_label(), self.session.code(), problem)
        self.query_one("#notebook-panel", Static).update(panel)

    def action_external_editor(self) -> None:
        from drill.tui.editor import edit_externally

        if self.notebook is not None:
            return
        self.action_save()
        notice = edit_externally(self.app, self.session.script)
        if notice is not None and notice.startswith("ctrl+e needs"):
            self.notify(notice)
            return
        if notice is not None:
            self.notify(notice, severity="error")
        self._load(self.script.load())  # saved before: the editor had nothing unsaved

    @on(TextArea.Changed, "#editor")
    def _code_changed(self, event: TextArea.Changed) -> None:
        self.code = event.text_area.text

    @on(TextArea.Changed, "#notes")
    def _notes_changed(self, event: TextArea.Changed) -> None:
        self.notes = event.text_area.text
