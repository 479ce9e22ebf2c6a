"""Small dialogs of the card browser: confirm a reset, show a card's review history."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from drill.tui.plain import shown


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: `y` confirms, `n` / escape declines."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 70; height: auto; border: thick $warning; background: $surface; padding: 1 2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(shown(self.question), id="confirm-question")
            yield Static("y: yes · n / escape: no", id="confirm-keys")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class HistoryScreen(ModalScreen[None]):
    """A card's review log, newest first."""

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical {
        width: 70; height: 80%; border: thick $primary; background: $surface; padding: 0 1;
    }
    HistoryScreen #history-lines { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,h", "close", "Close")]

    def __init__(self, card_id: str, lines: list[str]) -> None:
        super().__init__()
        self.card_id = card_id
        self.lines = lines

    def compose(self) -> ComposeResult:
        count = f"{len(self.lines)} review{'s' if len(self.lines) != 1 else ''}"
        with Vertical():
            yield Static(shown(f"Review history of {self.card_id} ({count}, newest first)"))
            with VerticalScroll(id="history-lines"):
                yield Static(shown("\n".join(self.lines) or "Never reviewed."), id="history-text")
            yield Static("escape: close")

    def action_close(self) -> None:
        self.dismiss()
