"""Pick a stretch phase after the coding round (drill.mock.coding.stretch): enter starts it on its
own 10-minute clock, escape goes back."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill.mock.coding.stretch import STRETCH_MINUTES, title


class StretchPickScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    StretchPickScreen { align: center middle; }
    StretchPickScreen > Vertical {
        width: 70; height: auto; border: thick $primary; background: $surface; padding: 1 2;
    }
    StretchPickScreen OptionList { height: auto; max-height: 8; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self, phases: list[str]) -> None:
        super().__init__()
        self.phases = phases

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Stretch phase: {STRETCH_MINUTES:g} minutes each, graded by behavior")
            yield OptionList(*(Option(title(p), id=p) for p in self.phases), id="stretch-list")
            yield Static("enter: start · escape: back")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_back(self) -> None:
        self.dismiss(None)
