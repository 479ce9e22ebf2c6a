"""Snapshot tests of the review screen (fixed clock, fixed terminal size, tmp DRILL_HOME)."""

from __future__ import annotations

from textual.pilot import Pilot

SIZE = (100, 30)


async def _start_review(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("a")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _reveal(pilot: Pilot) -> None:
    await _start_review(pilot)
    await pilot.press("space")
    await pilot.pause()


def test_review_screen_front(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_start_review)


def test_review_screen_revealed(snap_compare, make_app) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_reveal)


def test_home_screen(snap_compare, make_app) -> None:
    async def settle(pilot: Pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)
