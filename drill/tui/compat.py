"""Every use of Textual's private API in drill, in one place (checked against textual 8.2).

Why it exists: Textual has no public hook for "an exception escaped a message handler". It
calls the private `App._handle_exception`, which renders a full Rich traceback (with locals)
into the private `App._exit_renderables` list and prints it on exit. drill's users never see
a traceback: `QuietCrashes` keeps the error in `crash` (run_app re-raises it after the
terminal is restored, and the CLI prints it as one line) and drops the rendered traceback
unless DRILL_DEBUG=1. If a Textual upgrade renames either attribute, only this module and its
test (tests/drill/tui/test_compat.py) change.

Tests read notifications through Textual's public `run_test(message_hook=...)` (the `Notify`
message), never through the private `App._notifications`.
"""

from __future__ import annotations

import os
from typing import TypeVar

from textual.app import App

R = TypeVar("R")


def debug_enabled() -> bool:
    return os.environ.get("DRILL_DEBUG") == "1"


class QuietCrashes(App[R]):
    """An App whose unexpected errors end it without printing a traceback (see the module)."""

    crash: Exception | None = None

    def _handle_exception(self, error: Exception) -> None:  # private Textual API
        self.crash = error
        super()._handle_exception(error)
        if not debug_enabled():
            self._exit_renderables.clear()  # private Textual API
