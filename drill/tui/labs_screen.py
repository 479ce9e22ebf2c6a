"""Labs screen: every lab in the catalogue (name, group, linked cards, last result, summary),
runnable without a card, and the past runs of the highlighted lab, each reopenable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from drill.deck_loader import DeckSet
    from drill.lab_history import LabHistory, LabRunRecord
    from drill.lab_session import Runner
    from storage.db import Database


def linked_cards_by_lab(decks: DeckSet | None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for loaded in decks.decks if decks is not None else []:
        for card in loaded.deck.cards:
            if card.lab is not None:
                found.setdefault(card.lab.run, []).append(card.id)
    return found


class LabsScreen(Screen[None]):
    DEFAULT_CSS = """
    LabsScreen #labs-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    LabsScreen #labs { height: 2fr; }
    LabsScreen #lab-runs-title { height: 1; padding: 0 1; margin-top: 1; color: $text-muted; }
    LabsScreen #lab-runs { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "run", "Run lab", show=True),
        Binding("tab", "focus_next", "Past runs", show=True),
        Binding("escape,q", "leave", "Home"),
    ]

    def __init__(
        self,
        decks: DeckSet | None = None,
        db: Database | None = None,
        *,
        runner: Runner | None = None,
        runs_root: Path | None = None,
    ) -> None:
        super().__init__()
        self.decks = decks
        self.db = db
        self.runner = runner
        self.runs_root = runs_root
        self._history: LabHistory | None = None
        self._runs: list[LabRunRecord] = []
        self._names: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("Labs · enter runs the highlighted lab without a card", id="labs-title")
        yield DataTable(id="labs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="lab-runs-title")
        yield OptionList(id="lab-runs")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#labs", DataTable)
        table.add_columns("lab", "group", "cards", "last result", "summary")
        self._attach_history()
        self.refresh_table()
        table.focus()
        wait_heavy = getattr(self.app, "wait_heavy", None)
        if self.db is None and wait_heavy is not None:
            self.run_worker(self._when_loaded(wait_heavy), exit_on_error=False)

    def _attach_history(self) -> None:
        if self.db is not None and self._history is None:
            from drill.lab_history import LabHistory

            self._history = LabHistory(self.db)
            self._history.close_interrupted()

    async def _when_loaded(self, wait_heavy: Any) -> None:
        """Opened before the app's decks and database loaded: fill in cards and history then."""
        if not await wait_heavy():
            return
        heavy = self.app.backend.heavy  # type: ignore[attr-defined]
        self.decks, self.db = heavy.decks, heavy.db
        self._attach_history()
        self.refresh_table()

    def refresh_table(self) -> None:
        from trainer_lab.catalogue import CATALOGUE

        table = self.query_one("#labs", DataTable)
        row = table.cursor_row
        table.clear()
        linked = linked_cards_by_lab(self.decks)
        last = self._history.last_by_lab() if self._history is not None else {}
        self._names = list(CATALOGUE)
        for name, spec in CATALOGUE.items():
            record = last.get(name)
            summary = spec.summary if len(spec.summary) <= 60 else spec.summary[:59] + "…"
            table.add_row(
                name,
                spec.group,
                str(len(linked.get(name, []))),
                record.short() if record is not None else "never run",
                summary,
                key=name,
            )
        if self._names:
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
        if lab is not None and self._history is not None:
            self._runs = self._history.runs(lab=lab, limit=30)
        title = self.query_one("#lab-runs-title", Static)
        title.update(f"Past runs of {lab}: {len(self._runs)}" if lab else "")
        runs.add_options([Option(_run_line(r), id=f"run-{r.id}") for r in self._runs])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_runs(self.selected_lab())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_run()

    def action_run(self) -> None:
        lab = self.selected_lab()
        if lab is None:
            return
        from drill.tui.lab_panel import LabPanelScreen

        panel = LabPanelScreen(
            None, None, lab=lab, db=self.db, runner=self.runner, runs_root=self.runs_root
        )
        self.app.push_screen(panel, lambda _rated: self.refresh_table())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from drill.tui.lab_panel import open_run_record

        record = next((r for r in self._runs if f"run-{r.id}" == event.option.id), None)
        if record is not None:
            open_run_record(self.app, record)

    def action_leave(self) -> None:
        self.dismiss()


def _run_line(record: LabRunRecord) -> str:
    card = f" · card {record.card_id}" if record.card_id else ""
    params = " ".join(f"{k}={v}" for k, v in record.params.items())
    return f"{record.short()} · W={record.world_size}{card} · {params}"


def open_labs_screen(app: Any) -> None:
    """Push the labs screen with the app's decks and database when they are loaded."""
    heavy = getattr(getattr(app, "backend", None), "heavy", None)
    decks = heavy.decks if heavy is not None else None
    db = heavy.db if heavy is not None else None
    app.push_screen(LabsScreen(decks, db))
