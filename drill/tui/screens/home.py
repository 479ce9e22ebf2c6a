"""Home screen: the today queue (drill.plan.today: reviews, new cards, a lab to predict, an
exercise, the mock round on its planned days, each with minutes and progress; `enter` on it opens
the next item), the interview plan in force on one line, and one row per deck with due / new
counts and when its next card is due. It reads again after any rating (CardsRated), on coming
back to it, once the services have loaded (the lab, exercise and round items need the database)
and when a count changes with time (one timer)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Static

from drill import guarded_db
from drill.plan.today import (
    EXERCISE,
    LAB,
    MOCK,
    NEW,
    REVIEWS,
    TodayItem,
    days_left,
    next_item,
    today_queue,
)
from drill.review.queue import damaged_notice
from drill.times import next_day_start
from drill.tui.formatting import format_next_due, next_due_text_change
from drill.tui.plain import cells, shown
from drill.tui.rated import CardsRated
from drill.tui.screens.browser_columns import clip

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from textual.timer import Timer

    from drill.plan.today import PlanRow
    from drill.review.due import FirstPaint
    from drill.tui.host import DrillHost

COUNT_HEADERS = ("Due", "New", "Next due")
PAST_THE_CHANGE_S = 0.05  # the timer fires this long after the text changes, never before it


TABLE_CHROME = 2 + 2  # the title column's padding and the table's vertical scrollbar


def title_room(
    width: int, rows: list[tuple[str, ...]], headers: tuple[str, ...] = COUNT_HEADERS
) -> int:
    """Cells the first column (deck titles, today's labels) may take in a table `width` wide,
    so that the other columns (`rows`, each padded by one cell a side) always fit."""
    others = sum(
        max([len(header), *(len(row[i]) for row in rows)]) + 2 for i, header in enumerate(headers)
    )
    return max(width - others - TABLE_CHROME, len("Deck"))


TODAY_HEADERS = ("Today", "Min", "Done")


def minutes_text(minutes: float) -> str:
    """Whole minutes, rounded up (a started minute counts); "-" for nothing left."""
    return "-" if minutes <= 0 else str(math.ceil(minutes - 1e-9))


def plan_line(plan: PlanRow, now: datetime, day_start_hour: int) -> str:
    """The interview plan in force on one line: "Interview in 10 days · ROLE · 45 min/day"."""
    left = days_left(plan, now, day_start_hour)
    if left > 1:
        when = f"Interview in {left} days"
    elif left == 1:
        when = "Interview tomorrow"
    elif left == 0:
        when = "Interview today"
    else:
        when = f"Interview was on {plan.interview_day.isoformat()} (plain scheduling again)"
    return f"{when} · {plan.role} · {plan.minutes_per_day} min/day"


class HomeScreen(Screen[None]):
    DEFAULT_CSS = """
    HomeScreen #home-plan { height: 1; padding: 0 1; text-style: bold; }
    HomeScreen #today { height: auto; margin-bottom: 1; }
    """
    AUTO_FOCUS = "#decks"  # the deck table, as before; tab reaches the today queue
    BINDINGS: ClassVar[list[BindingType]] = [
        # enter and `a` are said on the totals line: the 80-column footer keeps "q Quit"
        Binding("enter,space", "review_selected", "Review", key_display="↵", show=False),
        Binding("a", "review_all", "All", show=False),
        Binding("c", "study", "Study"),
        Binding("m", "mock", "Mock"),
        Binding("L", "labs", "Labs"),
        Binding("X", "exercises", "Exercises"),  # short labels: the 80-column footer keeps "q Quit"
        Binding("S", "stats", "Stats"),
        Binding("B", "browse", "Cards"),  # the card browser, as `drill cards`
        Binding("P", "plan", "Plan"),  # the interview plan form
        Binding("R", "readiness", "Ready"),  # readiness per topic
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, startup: FirstPaint | None = None) -> None:
        super().__init__()
        self.deck_ids: list[str] = []
        self._startup = startup  # the app's startup read; later refreshes read again
        self._resumed_before = False
        self._read_pending = False  # a read after a rating is on its way
        self._stale = False  # ratings came while a full screen covered home
        self.loaded = False  # False while a cold start is still loading decks
        self._shown: FirstPaint | None = None  # what the table shows, for a resize
        self._shown_width = 0
        self._change_timer: Timer | None = None
        self.next_change_in: timedelta | None = None  # until the counts or a "Next due" change
        self.today: list[TodayItem] = []  # the today queue as shown, in walking order
        self.plan: PlanRow | None = None  # the interview plan in force, as last read

    @property
    def drill_app(self) -> DrillHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("drill · review", id="home-title")
        plan = Static("", id="home-plan")  # the interview plan in force; hidden without one
        plan.display = False
        yield plan
        today: DataTable[str] = DataTable(id="today", cursor_type="row")
        today.add_columns(*TODAY_HEADERS)
        yield today
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
        if self.drill_app.services is None:
            self.run_worker(self._when_loaded(), name="home-services", exit_on_error=False)

    async def _when_loaded(self) -> None:
        """The lab, exercise and round items read the database: show them once it is open."""
        if await self.drill_app.wait_services() is not None and self.loaded:
            self.refresh_counts()

    def on_screen_resume(self) -> None:
        if self._resumed_before:  # back from a review: counts changed
            self._stale = False
            self.refresh_counts()
        self._resumed_before = True

    def on_cards_rated(self, message: CardsRated) -> None:
        """A rating anywhere (a lab over the browser, an exercise): the counts moved. Hidden
        under a full screen (a review rating a card every few seconds), home only notes it and
        reads once when it shows again: its read walks every card (seconds at 50,000 cards),
        and nobody sees it meanwhile. Visible (current, or under a dialog), it reads once the
        screen on top has painted, once for ratings that come before that read."""
        if self.loaded and not self._read_pending:
            self._read_pending = True
            self.call_after_refresh(self._read_after_rating)

    @property
    def hidden(self) -> bool:
        """A full screen is on top of home (a dialog leaves home in sight behind it)."""
        stack = self.app.screen_stack
        above = stack[stack.index(self) + 1 :] if self in stack else []
        return any(not isinstance(screen, ModalScreen) for screen in above)

    @property
    def stale(self) -> bool:
        """Ratings came while hidden: the table shows counts from before them."""
        return self._stale

    def _read_after_rating(self) -> None:
        self._read_pending = False
        if self.hidden:  # under a full screen: read when it shows again
            self._stale = True
            return
        self._stale = False
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
        changes.append(next_day_start(now, self.drill_app.startup.settings.day_start_hour) - now)
        self.next_change_in = min(c for c in changes if c is not None)
        seconds = max(self.next_change_in.total_seconds(), 0.0) + PAST_THE_CHANGE_S
        self._change_timer = self.set_timer(seconds, self.on_next_change, name="next-due")

    def on_resize(self, event: events.Resize) -> None:
        """The deck titles are cut to the width, so that "Next due" always shows. The tables
        are filled again once the resize has been laid out: filled during it, a DataTable kept
        its columns at the headers' widths (seen at 120 -> 80 columns: "Revie" for "Reviews")."""
        if self._shown is not None and event.size.width != self._shown_width:
            self.call_after_refresh(self._show_at_new_width)

    def _show_at_new_width(self) -> None:
        if self._shown is not None and self.app.size.width != self._shown_width:
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
                "enter: review deck · a: all decks · tab: today"
            )
        else:
            totals.update("No decks found. Add YAML decks with --decks DIR or DRILL_DECKS.")
        notices = [n for n in (data.plan_notice, damaged_notice(data.schedules)) if n]
        self._show_notice(" · ".join(notices) or None)
        self._show_today(data, now)
        self._arm_next_change(data, now)
        self.refresh_bindings()

    def _show_today(self, data: FirstPaint, now: datetime) -> None:
        """The plan line and the today queue, from this read (its counts are the deck table's)
        and, once the services have loaded, the database (lab, exercise, round)."""
        settings = self.drill_app.startup.settings
        services = self.drill_app.services
        self.plan = data.plan
        line = self.query_one("#home-plan", Static)
        line.display = self.plan is not None
        if self.plan is not None:
            line.update(shown(plan_line(self.plan, now, settings.day_start_hour)))
        # Covered by another screen (a review rating a card every few seconds), only the counts
        # are read again; the lab, exercise and round items when home shows again (resume).
        covered = services is not None and not self.is_current
        db = services.db if services is not None and not covered else None
        done = guarded_db.read(
            lambda: today_queue(
                data,
                now,
                settings,
                plan=self.plan,
                typical_answer_s=data.typical_answer_s,
                db=db,
            )
        )
        if done.value is None:  # the database or the role table could not be read: say so
            self.notify(str(done.notice), severity="error", timeout=8)
        elif covered:
            counted = [item for item in done.value if item.kind in (REVIEWS, NEW)]
            self.today = counted + [i for i in self.today if i.kind not in (REVIEWS, NEW)]
        else:
            self.today = done.value
        table = self.query_one("#today", DataTable)
        table.clear(columns=True)  # columns too: the label column may shrink
        table.add_columns(*TODAY_HEADERS)
        rows = [
            (minutes_text(item.minutes), item.progress + (" ✓" if item.finished else ""))
            for item in self.today
        ]
        room = title_room(self._shown_width, rows, TODAY_HEADERS[1:])
        for item, counts in zip(self.today, rows, strict=True):
            table.add_row(clip(item.label, room), *cells(*counts))
        upcoming = next_item(self.today)
        if upcoming is not None:
            table.move_cursor(row=self.today.index(upcoming))

    def _show_notice(self, notice: str | None) -> None:
        """A status line under the totals while some cards are skipped as damaged."""
        line = self.query_one("#home-notice", Static)
        line.update(shown(notice or "", "yellow"))
        line.display = notice is not None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "today":
            self.open_today(event.cursor_row)
        else:
            self.action_review_selected()

    def open_today(self, row: int) -> None:
        """Open the today item on `row`, or the next one not done when that one is (so `enter`
        walks the queue in order: reviews, new cards, the lab, the exercise, the round)."""
        if not self.today:
            return
        item = self.today[min(max(row, 0), len(self.today) - 1)]
        if item.finished:
            found = next_item(self.today)
            if found is None:
                self.notify("Today's queue is done.", timeout=4)
                return
            item = found
        if item.kind == LAB:
            self._open_lab(item.target)
        elif item.kind == EXERCISE:
            self._open_exercise(item.target)
        elif item.kind == MOCK:
            self.action_mock()
        else:  # reviews and new cards: one session over all decks, due cards first
            self.drill_app.start_review(None)

    def _open_lab(self, card_id: str) -> None:
        from drill.tui.screens.lab_panel import open_lab_panel

        services = self.drill_app.services
        if services is None:
            self.notify("Still loading the decks; try again in a moment.", timeout=3)
            return
        card = services.decks.card(card_id)
        if card is None:
            self.notify(f"The card {card_id} is no longer in the decks.", timeout=4)
            return
        open_lab_panel(self.app, services, card, services.decks.deck_of(card_id))

    def _open_exercise(self, name: str) -> None:
        from drill.tui.screens.exercise import ExerciseScreen

        services = self.drill_app.services
        if services is None:
            self.notify("Still loading the decks; try again in a moment.", timeout=3)
            return
        self.app.push_screen(ExerciseScreen(services.exercises, name))

    def action_review_selected(self) -> None:
        today = self.query_one("#today", DataTable)
        if self.focused is today:  # space on the today queue: as enter there
            self.open_today(today.cursor_row)
            return
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

    def action_plan(self) -> None:
        """The interview plan form (date, role, minutes); home reads again when it closes."""
        from drill.tui.screens.plan_form import PlanFormScreen

        self.app.push_screen(PlanFormScreen(self.plan))

    def action_readiness(self) -> None:
        from drill.tui.screens.readiness import open_readiness_screen

        open_readiness_screen(self.drill_app)
