"""The answer box of a numbers card: type a number, Enter grades it, escape goes back."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from drill.decks.numbers import Instance, parse_typed, shown_back, suggested_rating, typed_line
from drill.review.ratings import RATING_NAMES
from drill.text import printable


def back_with_typed_answer(back: str, instance: Instance | None, typed: float | None) -> str:
    """A card's back as shown; for a numbers card with a typed answer, followed by how far off
    it is and the rating it suggests (the user still chooses)."""
    text = shown_back(back, instance)
    if instance is None or typed is None:
        return text
    rating = suggested_rating(typed, instance)
    return (
        f"{text}\n\n{typed_line(typed, instance)}, "
        f"suggested rating **{rating} {RATING_NAMES[rating]}** (yours to choose)"
    )


class NumberAnswerScreen(ModalScreen[float | None]):
    """Returns the typed number, or None when the user backs out."""

    DEFAULT_CSS = """
    NumberAnswerScreen { align: center middle; }
    NumberAnswerScreen > Vertical {
        width: 60; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def compose(self) -> ComposeResult:
        with Vertical():
            unit = printable(self.unit)  # deck text: shown as text, never as markup
            yield Static(f"Your answer ({unit})" if unit else "Your answer", markup=False)
            yield Input(placeholder="a number, e.g. 12.5 or 3e9", id="number-answer")
            yield Static("enter: check · escape: back", id="number-answer-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = parse_typed(event.value)
        if typed is None:
            self.query_one("#number-answer-hint", Static).update("not a number; try again")
            return
        self.dismiss(typed)

    def action_back(self) -> None:
        self.dismiss(None)
