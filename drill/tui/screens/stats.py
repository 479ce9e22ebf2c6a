"""Stats screen (`S` on home): what drill.review.stats computed, drawn.

Rendering only. The figures are computed in a thread (SQLite does the grouping); the review
calendar is drawn as text, the due forecast and weekly retention with textual_plotext, which is
imported only when the screen has something to plot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import AwaitMount, Widget
from textual.widgets import Footer, Static

from drill.review.stats import Stats

SHADES = ("grey23", "green4", "green3", "green1", "bright_green")
WEEKDAYS = ("Mon", "", "Wed", "", "Fri", "", "Sun")


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def summary_text(stats: Stats) -> str:
    c = stats.counts
    retention = percent(stats.retention.rate)
    days = "day" if stats.streak == 1 else "days"
    return (
        f"Today {stats.reviews_today} reviews · streak {stats.streak} {days} · "
        f"{stats.reviews_total} reviews in all\n"
        f"Cards: new {c['new']} · learning {c['learning']} · young {c['young']} · "
        f"mature {c['mature']} · suspended {c['suspended']}\n"
        f"True retention {retention} (desired {stats.desired_retention:.0%}) over "
        f"{stats.retention.reviews} mature reviews · due today {stats.forecast[0]}"
    )


def heatmap_text(stats: Stats) -> Text:
    """A calendar: one column per week (oldest left), one row per weekday."""
    if not stats.heatmap:
        return Text("")
    top = max(n for _, n in stats.heatmap) or 1
    first = stats.heatmap[0][0]
    start = first - timedelta(days=first.weekday())
    weeks = (stats.heatmap[-1][0] - start).days // 7 + 1
    grid: list[list[int | None]] = [[None] * weeks for _ in range(7)]
    for day, n in stats.heatmap:
        offset = (day - start).days
        grid[offset % 7][offset // 7] = n
    text = Text(f"Reviews per day, last {len(stats.heatmap)} days\n", style="bold")
    for weekday, row in enumerate(grid):
        text.append(f"{WEEKDAYS[weekday]:<4}")
        for n in row:
            if n is None:
                text.append(" ")
            else:
                shade = 0 if n == 0 else 1 + min(3, (n * 4 - 1) // top)
                text.append("■", style=SHADES[shade])
        text.append("\n")
    text.append("    less ")
    for shade in SHADES:
        text.append("■", style=shade)
    most = max(n for _, n in stats.heatmap)
    text.append(f" more (most: {most} a day)" if most else " more (no reviews yet)")
    return text


def retention_table(stats: Stats) -> Table:
    table = Table(title="True retention per deck", title_justify="left", show_edge=False)
    table.add_column("deck", ratio=2)
    table.add_column("mature reviews", justify="right")
    table.add_column("retention", justify="right")
    for deck, ret in stats.retention_by_deck.items():
        table.add_row(deck, str(ret.reviews), percent(ret.rate))
    if not stats.retention_by_deck:
        table.add_row("no mature reviews yet", "", "")
    return table


def weakest_table(stats: Stats) -> Table:
    table = Table(title="Weakest tags and decks", title_justify="left", show_edge=False)
    table.add_column("tag / deck", ratio=2)
    table.add_column("cards", justify="right")
    table.add_column("lapses", justify="right")
    table.add_column("retention", justify="right")
    for kind, spots in (("tag", stats.weakest_tags), ("deck", stats.weakest_decks)):
        for spot in spots:
            table.add_row(
                f"{kind} {spot.name}", str(spot.cards), str(spot.lapses), percent(spot.retention)
            )
    if not (stats.weakest_tags or stats.weakest_decks):
        table.add_row("no lapses yet", "", "", "")
    return table


def calibration_table(stats: Stats) -> Table:
    table = Table(
        title="Lab predictions: right by stated certainty",
        title_justify="left",
        caption=stats.calibration_verdict,
        caption_justify="left",
        show_edge=False,
    )
    table.add_column("certainty")
    table.add_column("predictions", justify="right")
    table.add_column("right", justify="right")
    for row in stats.calibration:
        table.add_row(row.certainty, str(row.predictions), percent(row.accuracy))
    return table


def mock_table(stats: Stats) -> Table:
    table = Table(title="Mock rounds", title_justify="left", show_edge=False)
    table.add_column("date")
    table.add_column("round")
    table.add_column("score", justify="right")
    table.add_column("band")
    for m in stats.mock_results[-10:]:
        table.add_row(
            m.started_at.astimezone().strftime("%Y-%m-%d"), m.round, f"{m.score:.0%}", m.band
        )
    if not stats.mock_results:
        table.add_row("no rounds yet", "", "", "")
    return table


def plot_widgets(stats: Stats) -> list[Widget]:
    """Due forecast and weekly retention (textual_plotext imported here, lazily)."""
    if not any(stats.forecast) and not stats.retention.reviews:
        return [Static("No schedule yet: review some cards and come back.", classes="stats-note")]
    from textual_plotext import PlotextPlot

    plots: list[Widget] = []
    if any(stats.forecast):
        forecast = PlotextPlot(id="plot-forecast", classes="stats-plot")
        forecast.plt.bar(list(range(len(stats.forecast))), stats.forecast, marker="sd")
        forecast.plt.title("Due per day, next 30 days (day 0: today and overdue)")
        plots.append(forecast)
    weeks = [(w, r.rate) for w, r in stats.retention_by_week if r.rate is not None]
    if weeks:
        weekly = PlotextPlot(id="plot-retention", classes="stats-plot")
        labels = [w.strftime("%m-%d") for w, _ in weeks]
        xs = list(range(len(weeks)))
        weekly.plt.plot(xs, [rate * 100 for _, rate in weeks], marker="braille")
        weekly.plt.xticks(xs, labels)
        weekly.plt.hline(stats.desired_retention * 100, "red")
        weekly.plt.title("True retention per week (%), red: desired")
        plots.append(weekly)
    return plots


class StatsScreen(Screen[None]):
    DEFAULT_CSS = """
    StatsScreen #stats-title { background: $primary; color: $text; padding: 0 1; }
    StatsScreen #stats-summary { padding: 0 1; height: auto; }
    StatsScreen #stats-body { padding: 0 1; }
    StatsScreen .stats-plot { height: 14; }
    StatsScreen .stats-block { height: auto; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "leave", "Back"),
        Binding("r", "reload", "Refresh"),
    ]

    def __init__(
        self,
        load: Callable[[], Stats] | None = None,
        *,
        stats: Stats | None = None,
        on_painted: Callable[[Stats], None] | None = None,
    ) -> None:
        super().__init__()
        self._load = load
        self.stats = stats
        self.on_painted = on_painted  # benchmark hook: figures loaded, mounted and painted

    def compose(self) -> ComposeResult:
        yield Static("drill · stats", id="stats-title")
        yield Static("Loading statistics…", id="stats-summary")
        yield VerticalScroll(id="stats-body")
        yield Footer()

    def on_mount(self) -> None:
        if self.stats is not None:
            self.show(self.stats)
        else:
            self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._reload(), exclusive=True, exit_on_error=False)

    async def _reload(self) -> None:
        from drill.review import actions

        if self._load is None:
            self._load = await _app_loader(self.app)
            if self._load is None:
                self.query_one("#stats-summary", Static).update("Decks did not load.")
                return
        done = await asyncio.to_thread(actions.read, self._load)
        if done.value is None:
            self.query_one("#stats-summary", Static).update(str(done.notice))
            return
        await self.query_one("#stats-body", VerticalScroll).remove_children()
        await self.show(done.value)
        if self.on_painted is not None:
            hook, stats = self.on_painted, done.value
            self.call_after_refresh(lambda: hook(stats))

    def show(self, stats: Stats) -> AwaitMount:
        self.stats = stats
        self.query_one("#stats-summary", Static).update(summary_text(stats))
        body = self.query_one("#stats-body", VerticalScroll)
        widgets: list[Widget] = [Static(heatmap_text(stats), classes="stats-block")]
        widgets += plot_widgets(stats)
        widgets += [
            Static(table, classes="stats-block")
            for table in (
                retention_table(stats),
                weakest_table(stats),
                calibration_table(stats),
                mock_table(stats),
            )
        ]
        return body.mount_all(widgets)

    def action_leave(self) -> None:
        self.dismiss()


async def _app_loader(app: Any) -> Callable[[], Stats] | None:
    """A loader over the running DrillApp's decks, database and settings (after its load)."""
    from drill.review.stats import stats_for

    wait_heavy = getattr(app, "wait_heavy", None)
    if wait_heavy is None or not await wait_heavy():
        return None
    heavy, backend = app.backend.heavy, app.backend
    return lambda: stats_for(heavy.decks, heavy.db.path, backend.settings, app.options.now())


def open_stats_screen(app: Any) -> None:
    app.push_screen(StatsScreen())
