"""Readiness screen (`R` on home): per topic a bar of expected recall on the interview date,
coloured against the target, with the other evidence beside it, and the five weakest items with
the one action each.

Rendering only: the figures are drill.plan.readiness's, read through Services.readiness() in a
thread. Topic names, prompts and ids are outside text: shown through drill.tui.plain, never as
markup.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from drill.plan.readiness import (
    COLUMN_HELP,
    KIND_TITLES,
    Readiness,
    TopicReadiness,
    meter,
    topic_cells,
)
from drill.text import printable
from drill.tui.plain import shown

if TYPE_CHECKING:
    from drill.services import ServicesSlot
    from drill.tui.host import DrillHost

PLAN_HINT = (
    "No interview plan: expected recall is for today. "
    "Set a date: drill plan --date YYYY-MM-DD --role ROLE"
)
NAME_WIDTH = 16
BAR_WIDTH = 12


def _style(recall: float, target: float) -> str:
    if recall >= target:
        return "green"
    return "yellow" if recall >= target / 2 else "red"


def headline(found: Readiness) -> Text:
    """The plan line, as text: the role is read from the database (never markup)."""
    if found.day is None or found.today is None:
        return shown(PLAN_HINT)
    days = (found.day - found.today).days
    when = f"in {days} day{'s' if days != 1 else ''}" if days > 0 else "passed"
    return shown(
        f"Interview {found.day} ({when}) · {found.role} · expected recall on "
        f"{found.measured_on} with no further review · target {found.target_recall:.0%}"
    )


def topic_line(t: TopicReadiness, target: float) -> Text:
    c = topic_cells(t)
    name = t.topic if len(t.topic) <= NAME_WIDTH else t.topic[: NAME_WIDTH - 1] + "…"
    line = Text(f"{printable(name):<{NAME_WIDTH}} ")
    line.append(meter(t.expected_recall, BAR_WIDTH), style=_style(t.expected_recall, target))
    line.append(
        f" {c['recall']} {c['introduced']:>7} {c['predictions']:<14} {c['exercises']:>5} "
        f"{c['checks']:>6} {c['followups']:>5}"
    )
    return line


def topics_text(found: Readiness) -> Text:
    header = (f"{'topic':<{NAME_WIDTH}} {'recall':<{BAR_WIDTH + 5}} {'cards':>7} "
              f"{'labs L/M/H':<14} {'ex':>5} {'checks':>6} {'f-ups':>5}")  # fmt: skip
    out = Text(no_wrap=True, overflow="ellipsis")
    for kind, title in KIND_TITLES.items():
        topics = [t for t in found.topics if t.kind == kind]
        if not topics:
            continue
        if out:
            out.append("\n\n")
        out.append(title, style="bold")
        out.append(f"\n{header}", style="dim")
        for t in topics:
            out.append("\n")
            out.append_text(topic_line(t, found.target_recall))
    return out


def weakest_text(found: Readiness) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("Weakest five: the one action for each", style="bold")
    if not found.weakest:
        out.append("\nnothing weak found")
    for number, item in enumerate(found.weakest, 1):
        out.append(f"\n{number}. ")
        out.append(printable(item.action), style="bold")
        out.append(f"  ({printable(item.what)}: {printable(item.why)})", style="dim")
    return out


class ReadinessScreen(Screen[None]):
    DEFAULT_CSS = """
    ReadinessScreen #readiness-title { background: $primary; color: $text; padding: 0 1; }
    ReadinessScreen #readiness-headline { padding: 0 1; height: auto; }
    ReadinessScreen #readiness-weakest {
        padding: 0 1; height: auto; margin-bottom: 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    ReadinessScreen #readiness-body { padding: 0 1; scrollbar-gutter: stable; }
    ReadinessScreen #readiness-topics { height: auto; text-wrap: nowrap; }
    ReadinessScreen #readiness-help { height: auto; margin-top: 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "leave", "Back"),
        Binding("r", "reload", "Refresh"),
    ]

    def __init__(
        self, readiness: Readiness | None = None, *, slot: ServicesSlot | None = None
    ) -> None:
        super().__init__()
        self.readiness = readiness
        self.slot = slot

    def compose(self) -> ComposeResult:
        found = self.readiness
        yield Static("drill · readiness", id="readiness-title")
        yield Static(headline(found) if found else "Loading readiness…", id="readiness-headline")
        yield Static(weakest_text(found) if found else "", id="readiness-weakest")
        with VerticalScroll(id="readiness-body"):
            yield Static(topics_text(found) if found else "", id="readiness-topics")
            yield Static(COLUMN_HELP, id="readiness-help")
        yield Footer()

    def on_mount(self) -> None:
        if self.readiness is None:
            self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._reload(), exclusive=True, exit_on_error=False)

    async def _reload(self) -> None:
        found, notice = await compute(self.slot)
        if found is None:
            self.query_one("#readiness-headline", Static).update(shown(notice))
            return
        self.show(found)

    def show(self, found: Readiness) -> None:
        self.readiness = found
        self.query_one("#readiness-headline", Static).update(headline(found))
        self.query_one("#readiness-weakest", Static).update(weakest_text(found))
        self.query_one("#readiness-topics", Static).update(topics_text(found))

    def action_leave(self) -> None:
        self.dismiss()


async def compute(slot: ServicesSlot | None) -> tuple[Readiness | None, str]:
    """The figures (in a thread), or None and the one line saying why not."""
    from drill import guarded_db
    from drill.errors import DrillError

    services = await slot.wait() if slot is not None else None
    if services is None:
        return None, "Decks did not load: no readiness to show."
    try:
        done = await asyncio.to_thread(guarded_db.read, services.readiness)
    except DrillError as error:
        return None, str(error)
    return done.value, done.notice or ""


def open_readiness_screen(app: DrillHost) -> None:
    """Compute the figures (in a thread) and push the screen with them; when they cannot be
    computed (decks not loaded, a database error) the screen says why itself."""

    async def compute_then_push() -> None:
        found, _notice = await compute(app.slot)
        app.push_screen(ReadinessScreen(found, slot=app.slot))

    app.run_worker(compute_then_push(), group="open-readiness", exclusive=True, exit_on_error=False)
