"""Outside text on screen: never markup (DESIGN.md, "Text from outside is text").

Textual parses a str given to a Static, Label, DataTable cell, Option, RadioButton, Checkbox,
border title or notification as markup (and Rich parses a str table cell): deck text such as
"[/oops]" crashed the app and "C++ [advanced]" lost its brackets. So deck text, database rows
and run output reach widgets only as what this module builds, with control characters made
visible (drill.text.printable):

- `shown(value)`: one value as Rich `Text` (a cell, an option, a label, a Static's text);
- `cells(...)`: a table row (DataTable or Rich Table), every cell a `Text`;
- `joined(...)`: drill's own styled words and outside text in one Textual `Content`, for a
  Static: styles such as "b green" are Textual's, so colours follow the theme as markup did;
  `lines(...)` stacks such lines;
- `editable(text)`: prose loaded into a TextArea (an answer from the database, notes);
- `PlainNotices`: the app's notify() with markup off and the message made printable (Textual's
  own ctrl+c hint, written as markup, is said again as text).

Card bodies are Markdown by design; they go through `printable()` before the Markdown parser.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from rich.text import Text
from textual.app import App
from textual.content import Content

from drill.text import printable

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

R = TypeVar("R")

Part = str | Text | Content | tuple[object, str]


def shown(value: object, style: str = "") -> Text:
    """`value` as Rich Text, shown as typed: no markup, control characters replaced. A Text
    keeps its spans (printable() replaces one character by one)."""
    if isinstance(value, Text):
        text = value.copy()
        text.plain = printable(text.plain)
        if style:
            text.stylize_before(style)
        return text
    if isinstance(value, Content):
        value = value.plain
    return Text(printable(str(value)), style=style)


def cells(*values: object) -> list[Text]:
    """A table row, every cell a Text (a str cell is markup to DataTable and Rich Table)."""
    return [shown(value) for value in values]


def joined(*parts: Part) -> Content:
    """One line of Content from parts: a str (or Text) is shown as it is; `(value, style)` is
    `value` in a Textual style ("b", "dim", "red"). Never parsed as markup."""
    pieces: list[str | tuple[str, str] | Content] = []
    for part in parts:
        if isinstance(part, tuple):
            value, style = part
            pieces.append((printable(str(value)), style))
        elif isinstance(part, Content):
            pieces.append(Content(printable(part.plain), list(part.spans)))
        elif isinstance(part, Text):
            pieces.append(Content.from_rich_text(shown(part)))
        else:
            pieces.append(printable(part))
    return Content.assemble(*pieces)


def lines(rows: Iterable[Part | Content]) -> Content:
    """`rows` one under the other (each a part as joined() takes it)."""
    return Content("\n").join(joined(row) for row in rows)


def editable(text: str) -> str:
    """Prose loaded into a TextArea (a saved answer, notes): printable, line ends kept."""
    return printable(text.replace("\r\n", "\n"))


class PlainNotices(App[R]):
    """An App whose notifications are text: markup off, the message and title printable.
    Widget.notify and Screen.notify call App.notify, so every notice of the app passes here."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,  # accepted for App's signature; always off
    ) -> None:
        super().notify(
            printable(str(message)),
            title=printable(str(title)),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def action_help_quit(self) -> None:
        """ctrl+c: Textual's hint on how to quit, whose message is markup ("Press [b]ctrl+q[/b]
        ..."), said as text, since notices here never parse markup."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return
