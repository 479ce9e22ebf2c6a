"""Card browser (`B` on home): search as you type, act on the highlighted card.

Rendering and keys only; the query language, search and row actions are drill.review.browse,
the column layout browser_columns. Typing goes to the search box; `down` or `enter` moves to
the results, where the letter keys act on the highlighted card and `/` goes back to the search
box. Every row action also has a ctrl key that works while typing, and the footer shows
whichever set the focus can use (the search box takes the letters).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from drill.editor_command import editor_command
from drill.review import browse
from drill.services import ServicesSlot
from drill.tui import plain
from drill.tui.rated import CardsRated
from drill.tui.screens import browser_columns
from drill.tui.screens.browser_columns import GAP, Column
from drill.tui.screens.browser_dialogs import ConfirmScreen, HistoryScreen
from drill.tui.typeahead import TypesAhead

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet
    from drill.review.browse import CardRow
    from drill.services import Database, Services
    from drill.tui.host import DrillHost

MAX_SHOWN = 50  # rows drawn at once; the count line says how many matched
CHROME = 2  # the table's left padding and its vertical scrollbar, always reserved (DEFAULT_CSS)
PLACEHOLDER = 'search: words "a phrase" tag:fsdp level:hard deck:bio is:due|new|suspended|leech'


def _system_now() -> datetime:
    return datetime.now(UTC)


class BrowserScreen(TypesAhead, Screen[None]):
    DEFAULT_CSS = """
    BrowserScreen #browse-title { background: $primary; color: $text; padding: 0 1; }
    BrowserScreen #browse-hint { color: $warning; padding: 0 1; height: auto; }
    BrowserScreen #browse-count { padding: 0 1; height: 1; }
    BrowserScreen #browse-table {
        height: 1fr; padding-left: 1; scrollbar-gutter: stable; scrollbar-size-vertical: 1;
    }
    BrowserScreen #browse-numbers { display: none; height: auto; max-height: 6; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back"),
        Binding("slash", "focus_search", "Search", show=False),  # named in the count line
        # The footer shows the first key the focused widget leaves free: the letter on the
        # results, the ctrl key in the search box (ctrl+b is tmux's prefix, ctrl+h backspace,
        # ctrl+e the input's end-of-line: hence t, y and o).
        Binding("s,ctrl+s", "toggle_suspend", "Suspend"),
        Binding("b,ctrl+t", "toggle_bury", "Bury"),
        Binding("r,ctrl+r", "reset", "Reset"),
        Binding("h,ctrl+y", "history", "History"),
        Binding("o,ctrl+o", "edit", "Edit"),  # open the deck file; `e` is the exercise key
        Binding("l,ctrl+l", "lab", "Lab"),
    ]

    def __init__(
        self,
        slot: ServicesSlot,
        *,
        query: str = "",
        run_editor: Callable[[list[str]], Any] = subprocess.call,
    ) -> None:
        """Opened before the services have loaded, it says so and searches once they are."""
        super().__init__()
        self.slot = slot
        self.services: Services | None = None
        self.decks: DeckSet | None = None
        self.db: Database | None = None
        self.now: Callable[[], datetime] = _system_now
        self.day_start_hour = 4
        self.rows: list[CardRow] = []
        self.shown: list[CardRow] = []
        self._initial_query = query
        self._run_editor = run_editor
        self._hint = ""
        self.columns: tuple[Column, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static("drill · cards", id="browse-title")
        yield Input(self._initial_query, placeholder=PLACEHOLDER, id="browse-query")
        yield Static("", id="browse-hint")
        yield Static("Loading cards…", id="browse-count")
        yield DataTable(id="browse-table", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield Static("", id="browse-numbers")  # shown while a numbers card is highlighted
        # No palette hint: at 80 columns it would cut the last row key (ctrl+p still works).
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#browse-query", Input).focus()
        self.ready_for_keys()  # what was typed while the screen opened goes to the search
        self._layout(self.app.size.width)
        if self.slot.ready is not None:
            self._use(self.slot.ready)
        else:
            self.run_worker(self._when_loaded(), exit_on_error=False)

    async def _when_loaded(self) -> None:
        services = await self.slot.wait()
        if services is None:
            self.query_one("#browse-count", Static).update("Decks did not load.")
            return
        self._use(services)

    def _use(self, services: Services) -> None:
        from drill import guarded_db

        self.services = services
        self.decks, self.db = decks, db = services.decks, services.db
        self.now, self.day_start_hour = services.now, services.settings.day_start_hour
        done = guarded_db.read(lambda: browse.build_rows(decks, db.path))
        if done.value is None:
            self.query_one("#browse-count", Static).update(plain.shown(done.notice))
            return
        self.rows = done.value
        self._layout(self.size.width or self.app.size.width)
        self.refilter(force=True)

    # --- columns -----------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        if self._layout(event.size.width):
            self.refilter(force=True)

    def _layout(self, width: int) -> bool:
        """Size the columns to `width` and the rows' longest ids; True if they changed. Only
        here, never per keystroke: the widths do not follow the filtered rows."""
        id_width = max((len(r.card_id) for r in self.rows), default=len("Card"))
        deck_width = max((len(r.deck_id) for r in self.rows), default=len("Deck"))
        columns = browser_columns.layout(width - CHROME, id_width, deck_width)
        if columns == self.columns:
            return False
        self.columns = columns
        table = self.query_one("#browse-table", DataTable)
        table.clear(columns=True)
        for column in columns:
            gap = 0 if column.key == "front" else GAP
            table.add_column(column.label, width=column.width + gap, key=column.key)
        return True

    # --- search ------------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refilter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#browse-table", DataTable).focus()

    def on_key(self, event: Any) -> None:
        if event.key == "down" and isinstance(self.focused, Input):
            event.stop()
            self.query_one("#browse-table", DataTable).focus()

    def refilter(self, force: bool = False) -> None:
        text = self.query_one("#browse-query", Input).value
        found, query = browse.search(
            self.rows, text, self.now(), day_start_hour=self.day_start_hour
        )
        if (query.hint or "") != self._hint:
            self._hint = query.hint or ""
            self.query_one("#browse-hint", Static).update(plain.shown(self._hint))
        table = self.query_one("#browse-table", DataTable)
        keep = self.current()
        shown = found[:MAX_SHOWN]
        self._show_count(len(found))
        if shown == self.shown and not force:
            return  # same rows (a half-typed term): nothing to redraw
        table.clear()
        self.shown = shown
        now = self.now()
        for row in self.shown:
            table.add_row(*browser_columns.row_cells(row, self.columns, now), key=row.card_id)
        if keep is not None and keep in self.shown:
            table.move_cursor(row=self.shown.index(keep))
        self._show_numbers_note()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_numbers_note()

    def _show_numbers_note(self) -> None:
        """Under the table, for a highlighted numbers card: its front shows one fixed drawing,
        and each review draws new values from these ranges."""
        row = self.current()
        note = self.query_one("#browse-numbers", Static)
        text = row.numbers_note if row is not None else ""
        note.display = bool(text)
        note.update(plain.shown(text))

    def _show_count(self, found: int) -> None:
        more = f" · showing the first {MAX_SHOWN}" if found > MAX_SHOWN else ""
        self.query_one("#browse-count", Static).update(
            f"{found} of {len(self.rows)} cards{more} · enter/↓: act on a row, /: search"
        )

    def current(self) -> CardRow | None:
        if not self.shown:
            return None
        row = self.query_one("#browse-table", DataTable).cursor_row
        return self.shown[min(max(row, 0), len(self.shown) - 1)]

    def action_focus_search(self) -> None:
        self.query_one("#browse-query", Input).focus()

    def on_cards_rated(self, message: CardsRated) -> None:
        """A rating anywhere (a lab opened from this screen): its rows read their states again."""
        self._reread_states()

    def _reread_states(self) -> None:
        if self.db is not None:
            from drill import guarded_db

            db_path = self.db.path
            done = guarded_db.read(lambda: browse.apply_states(self.rows, db_path))
            if not done.ok:
                self.notify(str(done.notice), severity="error", timeout=8)
        self.refilter(force=True)

    # --- row actions -------------------------------------------------------------------------
    def _write(self, call: Callable[[], Any], message: str) -> None:
        from drill import guarded_db

        done = guarded_db.write(call)
        if not done.ok:
            self.notify(str(done.notice), severity="error", timeout=8)
            return
        self._reread_states()
        self.notify(message, timeout=3)

    def action_toggle_suspend(self) -> None:
        row, db = self.current(), self.db
        if row is None or db is None:
            return
        flag = not row.suspended
        verb = "Suspended" if flag else "Unsuspended"
        self._write(lambda: browse.set_suspended(db, row, flag), f"{verb} {row.card_id}.")

    def action_toggle_bury(self) -> None:
        from drill.review.queue import next_day_start

        row, db = self.current(), self.db
        if row is None or db is None:
            return
        now = self.now()
        if row.is_buried(now):
            self._write(lambda: browse.set_buried(db, row, None), f"Unburied {row.card_id}.")
            return
        until = next_day_start(now, self.day_start_hour)
        self._write(
            lambda: browse.set_buried(db, row, until), f"Buried {row.card_id} until tomorrow."
        )

    def action_reset(self) -> None:
        row, db = self.current(), self.db
        if row is None or db is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._write(
                    lambda: browse.reset_schedule(db, row),
                    f"Reset {row.card_id}: it is new again (its history is kept).",
                )

        question = (
            f"Reset the scheduling of {row.card_id}?\nIt becomes a new card again "
            "(stability, lapses and leech flag cleared); its review history is kept."
        )
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_history(self) -> None:
        from drill import guarded_db

        row, db = self.current(), self.db
        if row is None or db is None:
            return
        done = guarded_db.read(lambda: browse.history_lines(db.path, row.card_id))
        if done.value is None:
            self.notify(str(done.notice), severity="error", timeout=8)
            return
        self.app.push_screen(HistoryScreen(row.card_id, done.value))

    def action_edit(self) -> None:
        row = self.current()
        if row is None or row.path is None:
            return
        command = editor_command(row.path, row.line)  # the path absolute, options ended
        before = browse.file_digest(row.path)
        try:
            with self.app.suspend():
                self._run_editor(command)
        except SuspendNotSupported:
            self.notify(f"Cannot start an editor here; the card is at {row.path}:{row.line}.")
            return
        except OSError as error:
            self.notify(f"Cannot start {command[0]}: {error.strerror}", severity="error")
            return
        after = browse.file_digest(row.path)
        if before is not None and after == before:
            self.notify(f"{row.path.name} unchanged.", timeout=3)
            return
        self.notify(f"Edited {row.path.name}; drill shows the change after a restart.")

    def action_lab(self) -> None:
        from drill.tui.screens.lab_panel import open_lab_panel

        row = self.current()
        if row is None or self.decks is None:
            return
        card = self.decks.card(row.card_id)
        if card is None or not row.has_lab:
            self.notify("This card has no lab.", timeout=3)
            return
        open_lab_panel(self.app, self.services, card, row.deck_id)

    def action_leave(self) -> None:
        self.dismiss()


def open_browser_screen(app: DrillHost) -> None:
    app.push_screen(BrowserScreen(app.slot))
