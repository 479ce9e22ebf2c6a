"""The coding round's clock bar: the phase (or the stretch phase), its time left, the round's
total and whether the clock is paused."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from drill.mock.clock import Status
from drill.mock.coding.rules import RoundConductor
from drill.tui.plain import shown

PAUSED = "PAUSED (F2 resumes)"


def remaining(seconds: float) -> str:
    """Time left as m:ss, rounded up: "0:00" only once nothing is left."""
    whole = math.ceil(round(max(0.0, seconds), 6))
    return f"{whole // 60}:{whole % 60:02d}"


class ClockBar(Horizontal):
    """One line above the panes; `show` writes what the round's clock says now."""

    def compose(self) -> ComposeResult:
        yield Static("", id="phase-name")
        yield Static("", id="phase-clock")
        yield Static("", id="total-clock")
        yield Static("", id="run-state")

    def show(self, rules: RoundConductor) -> None:
        """The running stretch phase's clock, else the round's."""
        name = self.query_one("#phase-name", Static)
        phase_clock = self.query_one("#phase-clock", Static)
        total = self.query_one("#total-clock", Static)
        state = self.query_one("#run-state", Static)
        stretch = rules.stretch
        if stretch is not None:
            name.update(shown(f"Stretch: {stretch.title}"))
            phase_clock.update(f"{remaining(stretch.clock.phase_remaining_s())} left")
            total.update("")
            state.update(PAUSED if stretch.clock.status is Status.PAUSED else "")
            return
        session = rules.session
        clock = session.clock
        over = session.finished
        name.update(shown(f"Phase {clock.phase + 1}/{len(session.phases)}: {session.phase.title}"))
        phase_clock.update("" if over else f"Phase {remaining(clock.phase_remaining_s())}")
        phase_clock.set_class(not over and clock.phase_remaining_s() <= 0, "overrun")
        total.update("Round over" if over else f"Total {remaining(clock.total_remaining_s())} left")
        state.update(PAUSED if clock.status is Status.PAUSED else "")
