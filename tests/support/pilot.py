"""Helpers for driving Textual apps in tests: run async bodies, wait for conditions, pick
options, and a minimal host app that pushes one screen."""

from __future__ import annotations

import asyncio
import functools
import html
import re
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Input, RadioButton, Static, TextArea

from drill.services import ServicesSlot
from drill.tui.plain import PlainNotices


def run_async(test: Callable[..., Any]) -> Callable[..., None]:
    """No async pytest plugin is installed: run the async test body under asyncio.run."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


async def until(pilot: Pilot, condition: Callable[[], bool], tries: int = 1500) -> None:
    """Let the app run until `condition` holds (bounded; fails the test otherwise)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition never held")


def screen_text(app: App[Any]) -> str:
    """What the app's screen shows now, row by row, from Textual's SVG screenshot: the cells
    the compositor would send to the terminal (notifications included), every character a
    widget rendered kept, control characters too."""
    svg = app.export_screenshot()
    rows: dict[float, list[str]] = {}
    for y, text in re.findall(r'<text[^>]*\sy="([\d.]+)"[^>]*>(.*?)</text>', svg, re.S):
        rows.setdefault(float(y), []).append(html.unescape(text).replace("\xa0", " "))
    return "\n".join("".join(parts) for _, parts in sorted(rows.items()))


def text_of(pilot: Pilot, selector: str) -> str:
    return str(pilot.app.screen.query_one(selector, Static).render())


async def choose(pilot: Pilot, set_id: str, index: int) -> None:
    def buttons() -> list[RadioButton]:
        return list(pilot.app.screen.query(f"#{set_id} RadioButton").results(RadioButton))

    await until(pilot, lambda: len(buttons()) > index)  # a just-pushed screen is composing
    button = buttons()[index]
    await pilot.click(button)
    await pilot.pause()


class Notices:
    """A `run_test(message_hook=...)` that records every notification the app was asked to
    show, as (message, severity): Textual's public message hook, not its private state."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str]] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            note = message.notification
            self.shown.append((str(note.message), str(note.severity)))

    def messages(self, severity: str | None = None) -> list[str]:
        return [text for text, level in self.shown if severity in (None, level)]


class HostApp(PlainNotices[None]):
    """Pushes one screen on mount and records what it dismissed with (notices as the app
    shows them: text, never markup)."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.first = screen
        self.dismissed: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.first, self.dismissed.append)


async def settle(pilot: Pilot) -> None:
    """Workers (the app's heavy load) done and the screen idle: ready for a snapshot. drill's
    app loads its services in a worker started after the first refresh, and the screens read
    the database again once they arrive: wait for the load to be settled first, then until no
    worker runs and every table is measured, across two idle pauses (a finished worker's
    handler may start another)."""
    app = pilot.app
    slot = getattr(app, "slot", None)
    if isinstance(slot, ServicesSlot):
        await until(pilot, lambda: slot.settled)
    quiet = 0
    for _ in range(200):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if any(not w.is_finished for w in app.workers) or not _tables_measured(app):
            quiet = 0
        else:
            quiet += 1
            if quiet == 2:
                return
        await pilot.pause(0.02)
    raise AssertionError("the app's workers never settled")


def _tables_measured(app: App[Any]) -> bool:
    """Every data table has measured the rows it was given: DataTable sizes its columns on its
    next idle, and a screenshot taken before that (seen on a loaded CI worker, just after home
    filled its tables again) draws every cell at the header's width."""
    return not any(
        table._require_update_dimensions or table._updated_cells
        for table in app.screen.query(DataTable)
    )


async def start_review(pilot: Pilot) -> None:
    """`a` on the home screen: the review of all decks, settled."""
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)


async def reveal(pilot: Pilot) -> None:
    """A review started and its first card's back shown."""
    await start_review(pilot)
    await pilot.press("space")
    await pilot.pause()


def steady_cursors(app: App[Any]) -> None:
    """Stop every text area's and input's cursor blinking, visible where focused: a snapshot
    taken on a loaded machine must not depend on where the blink timer was (a 0.5 s timer: on a
    busy machine the screenshot can land in either phase)."""
    for field in app.screen.query(Input):
        field.cursor_blink = False  # Input's watcher pauses the timer and shows the cursor
        field._cursor_visible = True  # also before the timer exists (not yet mounted)
        field.refresh()
    for area in app.screen.query(TextArea):
        area.cursor_blink = False
        # TextArea caches rendered lines under the same key for "blinking, in the off phase"
        # and "not blinking": a cursor row drawn in the off phase would be reused without its
        # cursor. A style update clears that cache, so the row is drawn again.
        area.notify_style_update()
        area.refresh()
