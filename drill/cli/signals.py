"""Signals during a command, and the one exit-status rule for them: a command that SIGINT
(Ctrl-C), SIGTERM or SIGHUP reached exits 128 + the signal's number (130, 143, 129), after its
cleanup, whatever the command did with the signal (unwound, or cancelled its lab and recorded
what it had). drill/cli/main.py applies the rule; the handlers here note which signal came.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

from drill.errors import Terminated

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the signals that reached the running command, first first


def exit_status(signum: int) -> int:
    """The exit status of a command stopped by signal `signum`: 128 + its number."""
    return 128 + signum


def stopped_by() -> int | None:
    """The first signal that reached the command since reset(), or None."""
    return _received[0] if _received else None


def reset() -> None:
    _received.clear()


def _note(signum: int) -> None:
    _received.append(signum)


def _unwind(signum: int, _frame: FrameType | None) -> None:
    _note(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


@contextmanager
def signals_unwind() -> Iterator[None]:
    """While a command runs, SIGINT raises KeyboardInterrupt and SIGTERM and SIGHUP raise
    Terminated (a KeyboardInterrupt), so every `finally` on the way out runs: no half-written
    backup, export or temporary file, no child left behind. The signal is noted for the exit
    status. The previous handlers come back afterwards."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for number in STOP_SIGNALS:
            previous[number] = signal.signal(number, _unwind)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def signals_cancel(cancel: threading.Event, notify: Callable[[str], object]) -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP set `cancel` (a lab or check then stops and records what it
    has) instead of unwinding this process; the signal is noted for the exit status. The
    previous handlers come back afterwards."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        first = not cancel.is_set()
        _note(signum)
        cancel.set()
        if first:
            name = signal.Signals(signum).name
            with suppress(OSError):  # SIGHUP: the terminal may be gone
                notify(f"{name}: cancelling the lab; it records what it observed so far")

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
