"""Console output of outside text (DESIGN.md, "Text from outside is text").

What a command prints from deck files, the database or a run goes through here, so that no
escape sequence in it reaches the terminal: `say()` is print() with drill.text.printable
applied to every value (control characters but newline and tab become U+FFFD). For a Rich
console (a progress display, a table), `text()` makes a value Rich `Text`, never markup: Rich's
markup escape() keeps neither "\\[" nor ":smile:" as typed. Rich is imported only when a
command uses it (the parser stays light). JSON output needs none of this: json.dumps writes
control characters as \\u escapes.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from drill.text import printable

if TYPE_CHECKING:
    from rich.text import Text


def say(
    *values: object,
    sep: str = " ",
    end: str = "\n",
    file: IO[str] | None = None,
    flush: bool = False,
) -> None:
    """print(), with every value shown as text (file None: the current sys.stdout)."""
    print(*(printable(str(value)) for value in values), sep=sep, end=end, file=file, flush=flush)


def text(value: object, style: str = "") -> Text:
    """`value` as Rich Text for a Rich console: never parsed as markup, printable."""
    from rich.text import Text

    return Text(printable(str(value)), style=style)
