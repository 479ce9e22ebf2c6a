"""Clocks a test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# "Now" in the TUI tests (tests/drill/tui/conftest.py's clock) and the stats they check.
TUI_START = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


class FakeClock:
    """A monotonic clock (seconds) the test moves by hand: round clocks, lab panels."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Clock:
    """The wall clock a test sets or moves: the app, the queue and the session all read it."""

    def __init__(self, start: datetime = TUI_START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
