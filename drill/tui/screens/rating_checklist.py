"""The checklist confirmed before a round rates any card (drill.mock.checklist holds the rule).

Each question of the round with its rubric items and the tick the matcher (or the grader)
proposed; the person moves with up/down (j/k), flips an item with space, confirms with enter or
chooses not to rate with n. Nothing is rated before enter. The screen dismisses with what the
confirm (or the refusal) did: a ChecklistOutcome.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from drill import guarded_db
from drill.mock.checklist import ChecklistOutcome, RatingChecklist
from drill.review.ratings import RATING_NAMES
from drill.tui.plain import joined, lines, shown


class ItemRow(Static):
    """One rubric item: its tick, the proposal when the person flipped it."""

    def __init__(self, entry: int, item: int) -> None:
        super().__init__("", classes="item", id=f"item-{entry}-{item}")
        self.entry = entry
        self.item = item


class RatingChecklistScreen(Screen[ChecklistOutcome]):
    DEFAULT_CSS = """
    #checklist-title { height: auto; background: $primary; padding: 0 1; text-style: bold; }
    #checklist { height: 1fr; padding: 0 1; }
    .entry-title { margin-top: 1; text-style: bold; }
    .entry-note { color: $text-muted; padding-left: 2; }
    .item { padding-left: 2; }
    .item.cursor { background: $accent 40%; text-style: bold; }
    #ratings { height: auto; max-height: 8; padding: 0 1; background: $boost; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", key_display="↑/k"),
        Binding("down,j", "move(1)", "Down", key_display="↓/j"),
        Binding("space", "flip", "Flip"),
        Binding("enter", "confirm", "Confirm and rate"),
        Binding("n", "do_not_rate", "Do not rate"),
    ]

    def __init__(self, checklist: RatingChecklist, title: str) -> None:
        super().__init__()
        self.checklist = checklist
        self.heading = title
        self.rows = [
            (e, i) for e, entry in enumerate(checklist.entries) for i in range(len(entry.items))
        ]
        self.cursor = 0

    def compose(self) -> ComposeResult:
        head = (
            f"{self.heading}: the matcher's ticks, yours to correct. Nothing is rated before enter."
        )
        yield Static(shown(head), id="checklist-title")
        with VerticalScroll(id="checklist"):
            for e, entry in enumerate(self.checklist.entries):
                yield Static(shown(f"{e + 1}. {entry.title}"), classes="entry-title")
                if not entry.answered:
                    yield Static("not answered: rates nothing", classes="entry-note")
                elif not entry.cards:
                    yield Static("no review card linked: rates nothing", classes="entry-note")
                for i in range(len(entry.items)):
                    yield ItemRow(e, i)
            if not self.rows:
                yield Static("No rubric item to check.", classes="entry-note")
        yield Static("", id="ratings")
        yield Footer()

    def on_mount(self) -> None:
        self._render_all()

    # --- keys ----------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        if self.rows:
            self.cursor = (self.cursor + step) % len(self.rows)
            self._render_all()

    def action_flip(self) -> None:
        if self.rows:
            self.checklist.flip(*self.rows[self.cursor])
            self._render_all()

    def action_confirm(self) -> None:
        done = guarded_db.write(self.checklist.confirm)
        if done.value is None:  # the ticks stay on screen for another try
            self.notify(str(done.notice), severity="error", timeout=8)
            return
        self.dismiss(done.value)

    def action_do_not_rate(self) -> None:
        self.dismiss(self.checklist.do_not_rate())

    # --- rendering -----------------------------------------------------------------------------
    def _render_all(self) -> None:
        current = self.rows[self.cursor] if self.rows else None
        for row in self.query(ItemRow):
            item = self.checklist.entries[row.entry].items[row.item]
            mark = "[x]" if item.ticked else "[ ]"
            proposed = "x" if item.proposed else "blank"
            note = (f"  (flipped; the matcher proposed {proposed})", "dim") if item.flipped else ""
            row.update(joined(f"{mark} {item.text}", note))
            at_cursor = (row.entry, row.item) == current
            row.set_class(at_cursor, "cursor")
            if at_cursor:
                row.scroll_visible(animate=False)
        ratings = self.checklist.proposed_ratings()
        rated = [
            joined(f"  {card}: {RATING_NAMES.get(r, r)}", (f" ({why})", "dim"))
            for card, (r, why) in ratings.items()
        ]
        head = "On enter, these cards are rated:" if rated else "On enter, no card is rated."
        self.query_one("#ratings", Static).update(lines([joined((head, "bold")), *rated]))
