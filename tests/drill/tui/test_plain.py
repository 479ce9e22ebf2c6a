"""drill.tui.plain: outside text becomes Rich Text or Textual Content, never markup, with its
control characters replaced; notifications are text. Fuzzed: whatever the text (brackets,
tags, escapes, control characters), the helpers and a screen showing it never raise and never
put a control character on the terminal."""

from __future__ import annotations

import asyncio
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from drill.cli.output import text as console_text
from drill.text import printable
from drill.tui.plain import PlainNotices, cells, editable, joined, lines, shown
from drill.tui.screens.browser_dialogs import HistoryScreen
from tests.support.hostile_decks import HOSTILE_VALUE, SHOWN, control_chars
from tests.support.pilot import Notices, run_async, screen_text

MARKUP = ["[", "]", "[/", "[/x]", "[b]", "[bold red]", "[link=file:///etc/passwd]", "[$accent]",
          "[@click=app.quit]", "\\", ":smile:", "<img src=x>", "&amp;"]  # fmt: skip
ESCAPES = ["\x1b", "\x1b]2;t\x07", "\x1b]52;c;aGk=\x07", "\x1b[2J", "\x9b", "\x07", "\r", "\n",
           "\t", "\x00", "\x7f"]  # fmt: skip
PIECE = st.one_of(st.sampled_from(MARKUP + ESCAPES), st.text(max_size=6))
HOSTILE = st.lists(PIECE, max_size=14).map("".join)


def rendered(*renderables: object) -> str:
    """What a plain Rich console writes for `renderables` (no colour: any ESC came from text)."""
    out = io.StringIO()
    console = Console(file=out, width=60, color_system=None, force_terminal=False)
    for renderable in renderables:
        console.print(renderable)
    return out.getvalue()


def test_shown_is_text_as_typed() -> None:
    text = shown(HOSTILE_VALUE)
    assert isinstance(text, Text) and text.plain == printable(HOSTILE_VALUE)
    assert text.plain.startswith(SHOWN) and not text.spans
    assert shown(Text("[/x]\x1b", style="red")).plain == "[/x]\ufffd"


def test_cells_and_joined_keep_every_bracket() -> None:
    table = Table()
    table.add_column("a")
    table.add_column("b")
    table.add_row(*cells("C++ [advanced]", 3))
    out = rendered(table)
    assert "C++ [advanced]" in out and "3" in out
    line = joined(("ok", "b green"), " · ", "[/x] C++ [advanced]")
    assert isinstance(line, Content) and line.plain == "ok · [/x] C++ [advanced]"
    assert [(s.start, s.end, s.style) for s in line.spans] == [(0, 2, "b green")]
    assert lines(["[/a]", ("[b]", "dim")]).plain == "[/a]\n[b]"
    assert editable("a\r\nb\x1b") == "a\nb\ufffd"


class ShowAll(PlainNotices[None]):
    """One screen of sinks (a Static, a DataTable row, an option, a notice) and a dialog."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(joined(("head", "b"), self.text))
        table: DataTable[Text] = DataTable()
        table.add_columns("a", "b")
        table.add_row(*cells(self.text, self.text))
        yield table
        yield OptionList(Option(shown(self.text)))

    def on_mount(self) -> None:
        self.notify(self.text, title=self.text)
        self.push_screen(HistoryScreen(self.text, [self.text, self.text]))


@run_async
async def test_notifications_are_text() -> None:
    notices = Notices()
    app = ShowAll("[/t]")
    async with app.run_test(size=(100, 30), message_hook=notices, notifications=True) as pilot:
        await pilot.pause()
        app.pop_screen()
        app.notify(HOSTILE_VALUE, title="[/t] \x1b]2;x\x07")  # markup would raise here
        await pilot.pause(0.2)
        assert control_chars(app.export_screenshot()) == []
        assert "[/t] \ufffd]2;x\ufffd" in screen_text(app)  # the toast's title
    assert notices.messages()[-1] == printable(HOSTILE_VALUE)


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(HOSTILE)
def test_the_helpers_never_raise_nor_let_a_control_character_through(text: str) -> None:
    assert shown(text).plain == printable(text)
    assert joined(text, (text, "b red")).plain == printable(text) * 2
    assert console_text(text, "red").plain == printable(text)  # what the CLI's Rich prints
    table = Table()
    table.add_column("cell")
    table.add_row(*cells(text))
    assert control_chars(rendered(shown(text), table, console_text(text))) == []


async def show_all(text: str) -> None:
    app = ShowAll(text)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        assert control_chars(app.export_screenshot()) == []
        app.pop_screen()
        await pilot.pause()
        assert control_chars(app.export_screenshot()) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE)
def test_a_screen_of_hostile_text_never_raises_nor_shows_a_control_character(text: str) -> None:
    asyncio.run(show_all(text))
