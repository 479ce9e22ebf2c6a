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


def pin_cli_clock(monkeypatch: object) -> datetime:
    """Pin the wall clock a CLI command reads (drill.services.system_now) to noon UTC of today,
    far from the 04:00 day start, so a test that writes "now" and then asks for "today" cannot
    straddle a day boundary. Returns the pinned moment."""
    import drill.services

    moment = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)

    class _Pinned(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
            return moment if tz is None or tz is UTC else moment.astimezone(tz)

    monkeypatch.setattr(drill.services, "datetime", _Pinned)  # type: ignore[attr-defined]
    return moment
