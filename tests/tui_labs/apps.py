"""A minimal host app for the lab screens (the real app's wiring belongs to the integrator)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.screen import Screen


class HostApp(App[None]):
    """Pushes one screen on mount and records what it dismissed with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.first = screen
        self.dismissed: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.first, self.dismissed.append)
