"""The user's file beside the model answer, both read-only (after a coding round, or an
exercise's check)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, TextArea

from drill.mock.coding import model_answer_source
from drill.tui.plain import shown


class ModelAnswerScreen(Screen[None]):
    DEFAULT_CSS = """
    ModelAnswerScreen #sides { height: 1fr; }
    ModelAnswerScreen TextArea { width: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, code: str, answer: str | None = None, file: str = "train.py") -> None:
        super().__init__()
        self.code = code
        self.answer = model_answer_source() if answer is None else answer
        self.file = file

    def compose(self) -> ComposeResult:
        with Horizontal(id="sides"):
            for text, name in ((self.code, "yours"), (self.answer, "model")):
                yield TextArea.code_editor(
                    text, language="python", read_only=True, soft_wrap=True, id=name
                )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#yours", TextArea).border_title = shown(f"Your {self.file}")
        self.query_one("#model", TextArea).border_title = "Model answer"
