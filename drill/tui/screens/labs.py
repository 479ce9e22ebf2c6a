"""Labs screen: every lab in the catalogue (name, group, linked cards, last result, summary),
runnable without a card, and the past runs of the highlighted lab, each reopenable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from drill.services import ServicesSlot, lab_run, labs_overview
from drill.tui.lists import LabTable, RunList
from drill.tui.plain import cells, shown

if TYPE_CHECKING:
    from drill.labs.controller import Runner
    from drill.labs.runs import RunRecord
    from drill.services import Database
    from drill.tui.host import DrillHost


# Below this many columns the group column gives way, so the last result is never cut. The
# summaries are a few sentences each: the highlighted lab's shows in full under the table.
WIDE = 100


class LabsScreen(Screen[None]):
    DEFAULT_CSS = """
    LabsScreen #labs-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    LabsScreen #labs { height: 2fr; }
    LabsScreen #lab-summary { height: auto; padding: 0 1; color: $text-muted; }
    LabsScreen #lab-runs-title { height: 1; padding: 0 1; margin-top: 1; color: $text-muted; }
    LabsScreen #lab-runs { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # Screen has no action_focus_next: without the `app.` namespace Tab did nothing here
        Binding("tab", "app.focus_next", "Past runs", show=True),
        Binding("escape,q", "leave", "Home"),
    ]

    def __init__(
        self,
        slot: ServicesSlot,
        *,
        runner: Runner | None = None,
        runs_root: Path | None = None,
    ) -> None:
        """Opened before the services have loaded, the screen lists the catalogue at once and
        fills in linked cards and past runs when they arrive."""
        super().__init__()
        self.slot = slot
        self.overview, self._notice = labs_overview(slot.ready)
        self.runner = runner
        self.runs_root = runs_root
        self._runs: list[RunRecord] = []
        self._names: list[str] = []
        self._not_runnable: set[str] = set()
        self._summaries: dict[str, str] = {}
        self._wide = True

    @property
    def db(self) -> Database | None:
        return self.overview.db

    def compose(self) -> ComposeResult:
        yield Static("Labs · enter runs the highlighted lab without a card", id="labs-title")
        yield LabTable(id="labs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="lab-summary")
        yield Static("", id="lab-runs-title")
        yield RunList(id="lab-runs")
        yield Footer()

    def on_mount(self) -> None:
        self._wide = self._is_wide(self.app.size.width)
        self._add_columns()
        self._say(self._notice)
        self.refresh_table()
        table = self.query_one("#labs", DataTable)
        table.focus()
        if self.slot.ready is None:
            self.run_worker(self._when_loaded(), exit_on_error=False)

    @staticmethod
    def _is_wide(width: int) -> bool:
        return width >= WIDE

    def _add_columns(self) -> None:
        table = self.query_one("#labs", DataTable)
        table.clear(columns=True)
        if self._wide:
            table.add_columns("lab", "group", "cards", "last result")
        else:
            table.add_columns("lab", "cards", "last result")

    def on_resize(self, event: events.Resize) -> None:
        wide = self._is_wide(event.size.width)
        if wide != self._wide:
            selected = self.selected_lab()  # the columns' reset moves the cursor to the top
            self._wide = wide
            self._add_columns()
            self.refresh_table(selected)

    def _say(self, notice: str | None) -> None:
        if notice:
            self.notify(notice, severity="error", timeout=8)

    async def _when_loaded(self) -> None:
        """Opened before the app's services loaded: fill in cards and history then."""
        services = await self.slot.wait()
        if services is None:
            return
        self.overview, notice = labs_overview(services)
        self._say(notice)
        self.refresh_table()

    def refresh_table(self, keep: str | None = None) -> None:
        """Fill the table again, the cursor on the lab it was on (`keep`: that lab's name)."""
        table = self.query_one("#labs", DataTable)
        row = table.cursor_row
        keep = keep or self.selected_lab()
        table.clear()
        found = self.overview.rows()
        self._say(found.notice)
        rows = found.value or []
        self._names = [r.name for r in rows]
        self._not_runnable = {r.name for r in rows if not r.runnable}
        self._summaries = {r.name: r.summary for r in rows}
        for lab in rows:
            if self._wide:
                row_cells = cells(lab.name, lab.group, lab.cards, lab.last)
            else:
                row_cells = cells(lab.name, lab.cards, lab.last)
            table.add_row(*row_cells, key=lab.name)
        if self._names:
            row = self._names.index(keep) if keep in self._names else row
            table.move_cursor(row=min(max(row, 0), len(self._names) - 1))
        self._show_runs(self.selected_lab())

    def selected_lab(self) -> str | None:
        table = self.query_one("#labs", DataTable)
        if not self._names or table.cursor_row < 0:
            return None
        return self._names[min(table.cursor_row, len(self._names) - 1)]

    def _show_runs(self, lab: str | None) -> None:
        runs = self.query_one("#lab-runs", OptionList)
        runs.clear_options()
        self._runs = []
        if lab is not None:
            found = self.overview.runs(lab)
            self._say(found.notice)
            self._runs = found.value or []
        summary = "" if lab is None else self._summaries.get(lab, "")
        self.query_one("#lab-summary", Static).update(shown(summary))
        title = self.query_one("#lab-runs-title", Static)
        title.update(shown(f"Past runs of {lab}: {len(self._runs)}" if lab else ""))
        runs.add_options([Option(shown(_run_line(r)), id=f"run-{r.id}") for r in self._runs])
        if self._runs:
            runs.highlighted = 0  # Enter opens the newest run without a Down first

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_runs(self.selected_lab())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_run()

    def action_run(self) -> None:
        lab = self.selected_lab()
        if lab is None:
            return
        if lab in self._not_runnable:
            self.notify(f"{lab} is not a lab to run here; tab to its past runs to open one.")
            return
        from drill.tui.screens.lab_panel import LabPanelScreen

        run = lab_run(self.slot.ready, None, None, lab=lab, runner=self.runner,
                      runs_root=self.runs_root)  # fmt: skip
        panel = LabPanelScreen(run)
        self.app.push_screen(panel, lambda _rated: self.refresh_table())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from drill.tui.screens.lab_panel import open_run_record

        record = next((r for r in self._runs if f"run-{r.id}" == event.option.id), None)
        if record is not None:
            open_run_record(self.app, record)

    def action_leave(self) -> None:
        self.dismiss()


def _run_line(record: RunRecord) -> str:
    card = f" · card {record.card_id}" if record.card_id else ""
    params = " ".join(f"{k}={v}" for k, v in record.params.items())
    return f"{record.short()} · W={record.world_size}{card} · {params}"


def open_labs_screen(app: DrillHost) -> None:
    app.push_screen(LabsScreen(app.slot))
