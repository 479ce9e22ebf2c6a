"""Exercises screen: every exercise with topic and status; enter opens one."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from drill.exercises.service import ExerciseService
from drill.tui.lists import ExerciseTable


class ExercisesScreen(Screen[None]):
    DEFAULT_CSS = """
    ExercisesScreen #exs-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    ExercisesScreen #exercises { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Home"),
    ]

    def __init__(self, service: ExerciseService) -> None:
        super().__init__()
        self.service = service
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("Exercises · enter opens one", id="exs-title")
        yield ExerciseTable(id="exercises", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#exercises", DataTable)
        table.add_columns("Exercise", "Topic", "Status", "Checks", "Title")
        self.refresh_rows()
        table.focus()

    def refresh_rows(self) -> None:
        table = self.query_one("#exercises", DataTable)
        table.clear()
        rows = self.service.list()
        self.names = [r.name for r in rows]
        for r in rows:
            table.add_row(r.name, r.spec.topic, r.status, str(r.progress.attempts), r.spec.title)
        solved = sum(r.status == "solved" for r in rows)
        self.query_one("#exs-title", Static).update(
            f"Exercises · {solved}/{len(rows)} solved · enter opens one"
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        if not self.names:
            return
        from drill.tui.screens.exercise import ExerciseScreen

        row = self.query_one("#exercises", DataTable).cursor_row
        name = self.names[min(row, len(self.names) - 1)]
        self.app.push_screen(ExerciseScreen(self.service, name), lambda _r: self.refresh_rows())


def open_exercises_screen(app: Any) -> None:
    from drill.tui.screens.exercise import exercise_service

    app.push_screen(ExercisesScreen(exercise_service(app)))
