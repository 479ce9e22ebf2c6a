"""A coding round's report as the screen shows it after the end: per phase the time used, the
checks with their evidence, the code as the phase left it, the follow-ups with the answers and
their verdicts, and the model answer's part with its walk-through (drill.mock.coding.report)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Markdown

from drill.text import printable


class CodingReportScreen(Screen[None]):
    DEFAULT_CSS = """
    CodingReportScreen #report-scroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-scroll"):
            yield Markdown(printable(self.markdown), id="report")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#report-scroll", VerticalScroll).focus()
