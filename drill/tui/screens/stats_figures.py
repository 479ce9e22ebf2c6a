"""The stats screen's figures, drawn: summary lines, the review calendar, tables and plots.

Pure renderers over drill.review.stats.Stats (no queries, no screen state). textual_plotext is
imported only when there is something to plot.
"""

from __future__ import annotations

import math
from datetime import timedelta
from itertools import groupby

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from drill.review.stats import Stats, counted
from drill.tui.plain import cells, shown

SHADES = ("grey23", "green4", "green3", "green1", "bright_green")
WEEKDAYS = ("Mon", "", "Wed", "", "Fri", "", "Sun")


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def summary_text(stats: Stats) -> str:
    c = stats.counts
    retention = percent(stats.retention.rate)
    return (
        f"Today {counted(stats.reviews_today, 'review')} · "
        f"streak {counted(stats.streak, 'day')} · {counted(stats.reviews_total, 'review')} in all\n"
        f"Cards: new {c['new']} · learning {c['learning']} · young {c['young']} · "
        f"mature {c['mature']} · suspended {c['suspended']}\n"
        f"True retention {retention} (desired {stats.desired_retention:.0%}) over "
        f"{counted(stats.retention.reviews, 'mature review')} · due today {stats.due_today}"
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
        cells = [None if n is None else 0 if n == 0 else 1 + min(3, (n * 4 - 1) // top)
                 for n in row]  # fmt: skip
        for shade, run in groupby(cells):  # one span per run of a shade: far cheaper to paint
            width = len(list(run))
            if shade is None:
                text.append(" " * width)
            else:
                text.append("■" * width, style=SHADES[shade])
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
        table.add_row(*cells(deck, ret.reviews, percent(ret.rate)))
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
                *cells(f"{kind} {spot.name}", spot.cards, spot.lapses, percent(spot.retention))
            )
    if not (stats.weakest_tags or stats.weakest_decks):
        table.add_row("no lapses yet", "", "", "")
    return table


def calibration_table(stats: Stats) -> Group:
    """Right by stated certainty; the verdict goes under the table, not in a caption, which
    Rich would wrap to the narrow table's width."""
    table = Table(title="Lab predictions by certainty", title_justify="left", show_edge=False)
    table.add_column("certainty")
    table.add_column("predictions", justify="right")
    table.add_column("right", justify="right")
    for row in stats.calibration:
        table.add_row(*cells(row.certainty, row.predictions, percent(row.accuracy)))
    return Group(table, shown(stats.calibration_verdict))


def mock_table(stats: Stats) -> Table:
    """Talk rounds (score and band) and coding and notebook rounds (checks that held), the
    latest ten by start, oldest first."""
    table = Table(title="Mock rounds", title_justify="left", show_edge=False)
    table.add_column("date")
    table.add_column("round")
    table.add_column("result")
    rows = [(m.started_at, m.round, f"{m.score:.0%} {m.band}") for m in stats.mock_results]
    rows += [(r.started_at, f"{r.kind} #{r.id}", r.result()) for r in stats.coding_rounds]
    for started, name, result in sorted(rows, key=lambda row: row[0])[-10:]:
        table.add_row(*cells(started.astimezone().strftime("%Y-%m-%d"), name, result))
    if not rows:
        table.add_row("no rounds yet", "", "")
    return table


def exercise_table(stats: Stats) -> Table:
    solved = stats.exercises_solved
    table = Table(
        title="Exercise checks",
        title_justify="left",
        caption=f"{counted(len(solved), 'exercise')} solved" if stats.exercise_results else None,
        caption_justify="left",
        show_edge=False,
    )
    table.add_column("date")
    table.add_column("exercise")
    table.add_column("checks", justify="right")
    table.add_column("result")
    for e in stats.exercise_results[-10:]:
        table.add_row(
            *cells(
                e.checked_at.astimezone().strftime("%Y-%m-%d"),
                e.name,
                f"{e.passed}/{e.total}",
                "solved" if e.solved else e.status,
            )
        )
    if not stats.exercise_results:
        table.add_row("no exercise checks yet", "", "", "")
    return table


def count_ticks(top: int, most: int = 5) -> list[int]:
    """Whole-number axis ticks from 0 to at least `top`, at most `most` + 1 of them: plotext
    would label a count axis 0.17, 0.33, ... when the counts are small."""
    step = max(1, math.ceil(top / most))
    return list(range(0, max(top, 1) + step, step))


def plot_widgets(stats: Stats) -> list[Widget]:
    """Due forecast and weekly retention (textual_plotext imported here, lazily)."""
    if not any(stats.forecast) and not stats.retention.reviews:
        return [Static("No schedule yet: review some cards and come back.", classes="stats-note")]
    from textual_plotext import PlotextPlot

    plots: list[Widget] = []
    if any(stats.forecast):
        forecast = PlotextPlot(id="plot-forecast", classes="stats-plot")
        forecast.plt.bar(list(range(len(stats.forecast))), stats.forecast, marker="sd")
        ticks = count_ticks(max(stats.forecast))
        forecast.plt.ylim(0, ticks[-1])
        forecast.plt.yticks(ticks, [str(t) for t in ticks])
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


def body_widgets(stats: Stats) -> list[Widget]:
    widgets: list[Widget] = [Static(heatmap_text(stats), classes="stats-block")]
    widgets += plot_widgets(stats)
    widgets += [
        Static(table, classes="stats-block")
        for table in (
            retention_table(stats),
            weakest_table(stats),
            calibration_table(stats),
            mock_table(stats),
            exercise_table(stats),
        )
    ]
    return widgets
