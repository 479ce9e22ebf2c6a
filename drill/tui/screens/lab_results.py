"""Results view of one lab run: the checks table, key observations, and plots where a curve
says more than numbers (loss per step for each run, per-rank phase times, memory per setup),
each the quantity the lab's claims compare, labelled so (drill.labs.plots).

Series come from drill.labs.plots (run dir events); textual_plotext is imported only when this
screen composes a plot, never on the TUI's first-paint path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from drill.labs.controller import error_message
from drill.labs.plots import PlotData, key_observations, ladder_mfu, plot_data, series_styles
from drill.text import printable
from drill.tui.plain import cells, joined, shown

if TYPE_CHECKING:
    from drill.labs.controller import LabResult


def checks_table(result: LabResult) -> Table:
    table = Table(title="Checks", title_justify="left", expand=True, show_edge=False)
    table.add_column("", width=4)
    table.add_column("check", ratio=1, overflow="fold")  # names have no spaces to wrap at
    table.add_column("detail", ratio=2)
    for check in result["checks"]:
        mark = "[green]✓[/]" if check["passed"] else "[red]✗[/]"  # drill's own markup
        table.add_row(mark, *cells(check["name"], check["detail"]))
    if not result["checks"]:
        table.add_row("", "no checks recorded", "")
    return table


def observations_table(result: LabResult) -> Table:
    table = Table(title="Key observations", title_justify="left", expand=True, show_edge=False)
    table.add_column("observation", ratio=2, overflow="fold")
    table.add_column("value", ratio=1, justify="right")
    for name, value in key_observations(result["observations"]):
        table.add_row(*cells(name, value))
    return table


def _status_line(result: LabResult) -> Content:
    world = result["world_size"] or result["env"].get("world_size", "?")
    params = " ".join(f"{k}={v}" for k, v in result["params"].items())
    error = error_message(result)
    took = f"{result['duration_s']:.1f} s"
    line = f"{result['lab']} · {result['status']} · W={world} · {took}  {params}"
    return joined(line, "\n", (error, "red")) if error else joined(line)


def plot_widgets(data: PlotData, ladder: list[tuple[str, float]] | None = None) -> list[Widget]:
    """One PlotextPlot per curve worth drawing (textual_plotext imported here, lazily)."""
    if data.empty and not ladder:
        return []
    from textual_plotext import PlotextPlot

    plots: list[Widget] = []
    if data.losses:
        loss = PlotextPlot(id="plot-loss", classes="lab-plot")
        plt = loss.plt
        styles = series_styles(list(data.losses))
        for style, points in zip(styles, data.losses.values(), strict=True):
            plt.plot(
                [s for s, _ in points],
                [v for _, v in points],
                label=printable(style.label),
                color=style.color,
                marker=style.marker,
            )
        plt.title("loss per step")
        plt.xlabel("step")
        plots.append(loss)
    if data.phases:
        phases = PlotextPlot(id="plot-phases", classes="lab-plot")
        ranks = sorted(data.phases)
        names = list(data.phases[ranks[0]])
        values = [[data.phases[r].get(n, 0.0) * 1000 for r in ranks] for n in names]
        colors = [style.color for style in series_styles(names)]
        labels = [printable(n) for n in names]
        phases.plt.stacked_bar([f"rank {r}" for r in ranks], values, labels=labels, color=colors)
        phases.plt.title("median phase time per step (ms), per rank")
        plots.append(phases)
    if data.memory:
        memory = PlotextPlot(id="plot-memory", classes="lab-plot")
        memory.plt.bar(
            [printable(label) for label in data.memory],
            list(data.memory.values()),
            color=series_styles(["memory"])[0].color,
        )
        memory.plt.title(data.memory_title)
        plots.append(memory)
    if ladder:
        bars = PlotextPlot(id="plot-ladder", classes="lab-plot")
        color = series_styles(["mfu"])[0].color
        bars.plt.bar(
            [printable(name) for name, _ in ladder], [mfu for _, mfu in ladder], color=color
        )
        bars.plt.title("MFU per rung")
        plots.append(bars)
    return plots


class LabResultsScreen(Screen[None]):
    """Read-only view of a result dict (fresh or reopened from history)."""

    DEFAULT_CSS = """
    LabResultsScreen #results-title { height: 1; padding: 0 1; background: $primary;
        text-style: bold; }
    LabResultsScreen #results-body { height: 1fr; padding: 0 1; }
    LabResultsScreen .lab-plot { height: 14; margin-top: 1; }
    LabResultsScreen .results-block { margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "leave", "Back")]

    def __init__(self, result: LabResult, run_dir: Path | None, title: str = "") -> None:
        super().__init__()
        self.result = result
        self.run_dir = run_dir
        self.title_text = title or f"Results · {result['lab']}"

    def compose(self) -> ComposeResult:
        yield Static(shown(self.title_text), id="results-title")
        with VerticalScroll(id="results-body"):
            yield Static(_status_line(self.result), id="results-status")
            yield Static(checks_table(self.result), id="results-checks", classes="results-block")
            yield Static(
                observations_table(self.result), id="results-observations", classes="results-block"
            )
            run_dir, lab = self.run_dir, str(self.result.get("lab", ""))
            data = plot_data(run_dir, lab) if run_dir is not None else PlotData()
            yield from plot_widgets(data, ladder_mfu(self.result["observations"]))
            if self.run_dir is not None:
                run_dir = shown(f"run dir: {self.run_dir}")
                yield Static(run_dir, id="results-dir", classes="results-block")
        yield Footer()

    def action_leave(self) -> None:
        self.dismiss()
