"""Home screen: one row per deck with due / new counts and when its next card is due."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from drill.review.queue import damaged_notice
from drill.times import next_day_start
from drill.tui.formatting import format_next_due, next_due_text_change
from drill.tui.plain import cells, shown
from drill.tui.rated import CardsRated
from drill.tui.screens.browser_columns import clip

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from textual.timer import Timer

    from drill.review.due import FirstPaint
    from drill.tui.host import DrillHost

COUNT_HEADERS = ("Due", "New", "Next due")
PAST_THE_CHANGE_S = 0.05  # the timer fires this long after the text changes, never before it


TABLE_CHROME = 2 + 2  # the title column's padding and the table's vertical scrollbar


def title_room(width: int, rows: list[tuple[str, str, str]]) -> int:
    """Cells the Deck column's titles may take in a table `width` wide, so that the Due, New
    and Next due columns (`rows`, each padded by one cell a side) always fit."""
    others = sum(
        max([len(header), *(len(row[i]) for row in rows)]) + 2
        for i, header in enumerate(COUNT_HEADERS)
    )
    return max(width - others - TABLE_CHROME, len("Deck"))


class HomeScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "review_selected", "Review", key_display="↵"),
        Binding("a", "review_all", "All"),
        Binding("c", "study", "Study"),
        Binding("m", "mock", "Mock"),
        Binding("L", "labs", "Labs"),
        Binding("X", "exercises", "Exercises"),  # short labels: the 80-column footer keeps "q Quit"
        Binding("S", "stats", "Stats"),
        Binding("B", "browse", "Cards"),  # the card browser, as `drill cards`
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, startup: FirstPaint | None = None) -> None:
        super().__init__()
        self.deck_ids: list[str] = []
        self._startup = startup  # the app's startup read; later refreshes read again
        self._resumed_before = False
        self.loaded = False  # False while a cold start is still loading decks
        self._shown: FirstPaint | None = None  # what the table shows, for a resize
        self._shown_width = 0
        self._change_timer: Timer | None = None
        self.next_change_in: timedelta | None = None  # until the counts or a "Next due" change

    @property
    def drill_app(self) -> DrillHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("drill · review", id="home-title")
        table: DataTable[str] = DataTable(id="decks", cursor_type="row", zebra_stripes=True)
        table.add_columns("Deck", *COUNT_HEADERS)
        yield table
        yield Static("", id="home-totals")
        notice = Static("", id="home-notice")  # cards skipped as damaged; hidden when none
        notice.display = False
        yield notice
        yield Footer(show_command_palette=False)  # every key fits at 80 columns

    def on_mount(self) -> None:
        startup, self._startup = self._startup, None
        self.show(startup)

    def on_screen_resume(self) -> None:
        if self._resumed_before:  # back from a review: counts changed
            self.refresh_counts()
        self._resumed_before = True

    def on_cards_rated(self, message: CardsRated) -> None:
        """A rating anywhere (a lab over the browser, an exercise): the counts moved."""
        if self.loaded:
            self.refresh_counts()

    def on_next_change(self) -> None:
        """The moment a count or a "Next due" reads otherwise: read again (covered by another
        screen, it waits for the resume)."""
        self._change_timer = None
        if self.is_current:
            self.refresh_counts()

    def _arm_next_change(self, data: FirstPaint, now: datetime) -> None:
        """One timer for the next moment the table changes by itself: a deck's next card falls
        due, its "in 2m" becomes "in 1m", a new learner day starts. Re-armed after each read."""
        if self._change_timer is not None:
            self._change_timer.stop()
            self._change_timer = None
        changes = [next_due_text_change(s.next_due, now) for s in data.summaries]
        changes.append(next_day_start(now, self.drill_app.backend.settings.day_start_hour) - now)
        self.next_change_in = min(c for c in changes if c is not None)
        seconds = max(self.next_change_in.total_seconds(), 0.0) + PAST_THE_CHANGE_S
        self._change_timer = self.set_timer(seconds, self.on_next_change, name="next-due")

    def on_resize(self, event: events.Resize) -> None:
        """The deck titles are cut to the width, so that "Next due" always shows."""
        if self._shown is not None and event.size.width != self._shown_width:
            self.show(self._shown)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "review_selected":
            return True if self.deck_ids else None
        return True

    def refresh_counts(self) -> None:
        data = self.drill_app.light_read()
        if data is not None or not self.loaded:  # unreadable: keep the counts on screen
            self.show(data)

    def show(self, data: FirstPaint | None) -> None:
        table = self.query_one("#decks", DataTable)
        totals = self.query_one("#home-totals", Static)
        if data is None:
            totals.update("Loading decks…")
            return
        self.loaded = True
        row = table.cursor_row
        table.clear(columns=True)  # columns too: an auto width only grows, the titles may shrink
        table.add_columns("Deck", *COUNT_HEADERS)
        now = self.drill_app.options.now()
        self.deck_ids = []
        self._shown = data
        rows = [(str(s.due), str(s.new), format_next_due(s.next_due, now)) for s in data.summaries]
        self._shown_width = self.app.size.width  # the screen is as wide (its size lags a resize)
        title_width = title_room(self._shown_width, rows)
        for summary, counts in zip(data.summaries, rows, strict=True):
            self.deck_ids.append(summary.deck_id)
            self.drill_app.deck_titles[summary.deck_id] = summary.title
            table.add_row(clip(summary.title, title_width), *cells(*counts), key=summary.deck_id)
        if self.deck_ids:
            table.move_cursor(row=min(row, len(self.deck_ids) - 1))
            totals.update(
                f"All decks: {data.totals['due']} due, {data.totals['new']} new · "
                "enter: review deck · a: review all"
            )
        else:
            totals.update("No decks found. Add YAML decks with --decks DIR or DRILL_DECKS.")
        self._show_notice(damaged_notice(data.schedules))
        self._arm_next_change(data, now)
        self.refresh_bindings()

    def _show_notice(self, notice: str | None) -> None:
        """A status line under the totals while some cards are skipped as damaged."""
        line = self.query_one("#home-notice", Static)
        line.update(shown(notice or "", "yellow"))
        line.display = notice is not None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_review_selected()

    def action_review_selected(self) -> None:
        if not self.deck_ids:
            return
        table = self.query_one("#decks", DataTable)
        deck_id = self.deck_ids[min(table.cursor_row, len(self.deck_ids) - 1)]
        self.drill_app.start_review(deck_id)

    def action_review_all(self) -> None:
        self.drill_app.start_review(None)

    def action_mock(self) -> None:
        from drill.tui.screens.mock_picker import open_mock_round

        open_mock_round(self.drill_app)

    def action_labs(self) -> None:
        from drill.tui.screens.labs import open_labs_screen

        open_labs_screen(self.drill_app)

    def action_exercises(self) -> None:
        from drill.tui.screens.exercises import open_exercises_screen

        open_exercises_screen(self.drill_app)

    def action_study(self) -> None:
        """Custom study: a small form (tag / level / deck / count)."""
        from drill.tui.screens.study_form import StudyFormScreen

        self.app.push_screen(StudyFormScreen())

    def action_stats(self) -> None:
        from drill.tui.screens.stats import open_stats_screen

        open_stats_screen(self.drill_app)

    def action_browse(self) -> None:
        from drill.tui.screens.browser import open_browser_screen

        open_browser_screen(self.drill_app)
