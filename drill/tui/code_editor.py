"""The Python editor of the exercise and coding-round screens: Textual's TextArea as a code
editor, plus what it lacks (Textual 8.2.8): enter keeps the line's indentation (one level more
after a line ending in ':'), and f7 (TextArea's select-all) is named in the footer. The verdicts
name places in the user's file ("called at train.py:105"); `file_lines` finds them there, and
`go_to_line` puts the editor's cursor on one."""

from __future__ import annotations

import re
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import TextArea


class CodeEditor(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f7", "select_all", "Select all"),  # TextArea's own key, shown in the footer
    ]

    async def _on_key(self, event: events.Key) -> None:
        if event.key != "enter" or self.read_only:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        self._restart_blink()
        start, end = self.selection
        row, column = min(start, end)
        self.replace("\n" + next_line_indent(self.document[row][:column]), start, end)


def next_line_indent(before_cursor: str, width: int = 4) -> str:
    """The indentation a new line starts with: the current line's, one level deeper after a
    line that opens a block (ends in ':', comments aside)."""
    indent = before_cursor[: len(before_cursor) - len(before_cursor.lstrip(" \t"))]
    code = before_cursor.split("#", 1)[0].rstrip()
    return indent + " " * width if code.endswith(":") else indent


def file_lines(text: str, file_name: str) -> list[int]:
    """The lines of `file_name` that `text` names as `file_name:LINE`, in order, each once."""
    pattern = re.compile(rf"(?<![\w./-]){re.escape(file_name)}:(\d+)")
    return list(dict.fromkeys(int(m.group(1)) for m in pattern.finditer(text)))


class VerdictPlaces:
    """The places in the user's file that the shown verdicts name; each `take` gives the next
    one (round robin), so that repeated presses walk through them."""

    def __init__(self) -> None:
        self.lines: list[int] = []
        self._next = 0

    def show(self, verdicts: str, file_name: str) -> None:
        self.lines, self._next = file_lines(verdicts, file_name), 0

    def take(self) -> int | None:
        if not self.lines:
            return None
        line = self.lines[self._next % len(self.lines)]
        self._next += 1
        return line


ZOOM_KEY = "f5: this pane alone (f5 again: back)"


def verdict_keys(places: VerdictPlaces, file_name: str, zoom: str = ZOOM_KEY) -> str:
    """The line under the verdicts naming their keys (the footer has no room for them at 80
    columns): `zoom` says how the pane gets the screen, ctrl+o walks the places they name."""
    if not places.lines:
        return zoom
    first = f"{file_name}:{places.lines[0]}"
    more = ", then the next place" if len(places.lines) > 1 else ""
    return f"ctrl+o: the editor at {first}{more} · {zoom}"


def toggle_zoom(widget: Widget) -> bool:
    """The widget alone on its screen (Textual's maximize), or back; True when now zoomed."""
    screen = widget.screen
    if screen.maximized is widget:
        screen.minimize()
        return False
    widget.ALLOW_MAXIMIZE = True  # a scroll container refuses by default (Textual 8)
    return screen.maximize(widget, container=False)


def go_to_line(editor: TextArea, line: int) -> None:
    """Cursor at the start of `line` (1-based, kept within the file), scrolled into view."""
    row = max(0, min(line - 1, editor.document.line_count - 1))
    editor.move_cursor((row, 0), center=True)
    editor.focus()


def reload_text(editor: TextArea, text: str) -> None:
    """Replace the editor's text, its cursor kept where it was (on the last line at most)."""
    row, column = editor.cursor_location
    editor.load_text(text)
    editor.cursor_location = (min(row, editor.document.line_count - 1), column)
