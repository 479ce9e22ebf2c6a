"""The card browser hosted alone for Pilot tests, on a fixed clock (shared by the browser's tests
and the refresh-after-rating tests)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from drill.tui.screens.browser import BrowserScreen
from tests.support.pilot import HostApp
from tests.support.services import slot_for

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def host(decks: Any, db: Any, **kw: Any) -> HostApp:
    return HostApp(BrowserScreen(slot_for(decks, db, now=lambda: NOW), **kw))
