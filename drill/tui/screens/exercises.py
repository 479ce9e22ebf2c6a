"""Exercises screen: every exercise with topic and status; enter opens one.

Opened before the app's services have loaded (`X` right after start) it says so and fills in
the progress once they are there: the list reads the database, which is part of the load."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from drill.services import ServicesSlot
from drill.tui.lists import ExerciseTable
from drill.tui.plain import cells

if TYPE_CHECKING:
    from drill.exercises.service import ExerciseService
    from drill.tui.host import DrillHost


class ExercisesScreen(Screen[None]):
    DEFAULT_CSS = """
    ExercisesScreen #exs-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    ExercisesScreen #exercises { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Home"),
    ]

    def __init__(self, slot: ServicesSlot) -> None:
        super().__init__()
        self.slot = slot
        self.names: list[str] = []

    @property
    def service(self) -> ExerciseService | None:
        services = self.slot.ready
        return services.exercises if services is not None else None

    def compose(self) -> ComposeResult:
        yield Static("Exercises · enter opens one", id="exs-title")
        yield ExerciseTable(id="exercises", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#exercises", DataTable)
        table.add_columns("Exercise", "Topic", "Status", "Checks", "Title")
        table.focus()
        if self.service is not None:
            self.refresh_rows()
        else:
            self.query_one("#exs-title", Static).update("Exercises · loading your progress…")
            self.run_worker(self._when_loaded(), exit_on_error=False)

    async def _when_loaded(self) -> None:
        if await self.slot.wait() is None:
            self.query_one("#exs-title", Static).update("Exercises · the database did not load")
            return
        self.refresh_rows()

    def refresh_rows(self) -> None:
        service = self.service
        if service is None:
            return
        table = self.query_one("#exercises", DataTable)
        table.clear()
        rows = service.list()
        self.names = [r.name for r in rows]
        for r in rows:
            row = cells(r.name, r.spec.topic, r.status, r.progress.attempts, r.spec.title)
            table.add_row(*row)
        solved = sum(r.status == "solved" for r in rows)
        self.query_one("#exs-title", Static).update(
            f"Exercises · {solved}/{len(rows)} solved · enter opens one"
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        service = self.service
        if not self.names or service is None:
            return
        from drill.tui.screens.exercise import ExerciseScreen

        row = self.query_one("#exercises", DataTable).cursor_row
        name = self.names[min(row, len(self.names) - 1)]
        self.app.push_screen(ExerciseScreen(service, name), lambda _r: self.refresh_rows())


def open_exercises_screen(app: DrillHost) -> None:
    app.push_screen(ExercisesScreen(app.slot))
