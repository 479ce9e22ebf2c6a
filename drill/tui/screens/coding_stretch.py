"""Pick a stretch phase (drill.mock.coding.stretch). After the coding round, enter starts one on
its own clock (10 minutes, scaled like the round); during the round, enter adds one to (or takes
it off) the phases chosen up front, which then run after the round in the order chosen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from drill.mock.coding.stretch import stretch_minutes, title


class StretchPickScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    StretchPickScreen { align: center middle; }
    StretchPickScreen > Vertical {
        width: 70; height: auto; border: thick $primary; background: $surface; padding: 1 2;
    }
    StretchPickScreen OptionList { height: auto; max-height: 8; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(
        self, phases: list[str], scale: float = 1.0, chosen: list[str] | None = None
    ) -> None:
        super().__init__()
        self.phases = phases
        self.scale = scale
        self.chosen = chosen  # None: pick one to start now; else the up-front choice so far

    def compose(self) -> ComposeResult:
        each = minutes_label(self.scale)
        with Vertical():
            if self.chosen is None:
                yield Static(f"Stretch phase: {each} each, graded by behavior")
            else:
                yield Static(
                    f"Stretch phases after the round: {each} each, graded by behavior, run in "
                    "the order chosen as the round ends"
                )
            yield OptionList(
                *(Option(self._label(p), id=p) for p in self.phases), id="stretch-list"
            )
            hint = "enter: start" if self.chosen is None else "enter: choose (or drop)"
            yield Static(f"{hint} · escape: back")

    def _label(self, phase_id: str) -> str:
        if self.chosen is None:
            return title(phase_id)
        at = self.chosen.index(phase_id) + 1 if phase_id in self.chosen else None
        return f"{at}. {title(phase_id)}" if at else f"   {title(phase_id)}"

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_back(self) -> None:
        self.dismiss(None)


def minutes_label(scale: float) -> str:
    """A stretch phase's clock in a round scaled by `scale`: "10 minutes", "2 minutes 12 s"."""
    seconds = round(stretch_minutes(scale) * 60)
    whole, rest = divmod(seconds, 60)
    if not rest:
        return f"{whole} minute" + ("" if whole == 1 else "s")
    return f"{whole} min {rest} s" if whole else f"{rest} s"
