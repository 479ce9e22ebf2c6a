"""Tables and option lists whose Enter is named in the footer.

DataTable and OptionList bind enter themselves with show=False, and the focused widget's
binding wins over the screen's: a screen's own `enter` binding never reaches the footer, so
these subclasses name what Enter does where the user looks for it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable, OptionList


class LabTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Run lab")]


class ExerciseTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Open")]


class RunList(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select", "Open run")]
