"""End-of-session summary: cards reviewed, Again count, time spent."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from drill.tui.formatting import format_duration
from drill.tui.plain import shown

if TYPE_CHECKING:
    from drill.review.session import SessionStats


def summary_lines(stats: SessionStats | None) -> list[str]:
    if stats is None or stats.reviewed == 0:
        return ["No cards reviewed.", "Nothing left to review here right now."]
    return [
        f"Reviewed: {stats.reviewed}",
        f"Again:    {stats.again}",
        f"Time:     {format_duration(stats.elapsed_s)}",
    ]


class SummaryScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape,q,space", "leave", "Home"),
    ]

    def __init__(self, stats: SessionStats | None, title: str) -> None:
        super().__init__()
        self.stats = stats
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="summary"):
            yield Static(shown(f"Session done · {self.title_text}"), id="summary-title")
            yield Static("\n".join(summary_lines(self.stats)), id="summary-body")
            yield Static("Press enter to go back home.", id="summary-hint")
        yield Footer(show_command_palette=False)  # every key fits at 80 columns

    def action_leave(self) -> None:
        self.dismiss()
