"""Snapshots of the coding round's pushback phase (the follow-up questions from the script's
own grading, asked one at a time on their own clock over the round's screen) and of a notebook
round (the panel in place of the editor), at 120x40 and at 80x24. Update with
`pytest tests/drill/tui/screens/test_coding_round_snapshots.py --snapshot-update`."""

from __future__ import annotations

import os
import time

import pytest

from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.tui.screens import coding_round
from drill.tui.screens.coding_followups import FollowUpScreen
from drill.tui.screens.coding_round import CodingApp
from tests.support.clocks import FakeClock
from tests.support.coding_grader import BROKEN, broken_source, fake_grader
from tests.support.pilot import steady_cursors, text_of, until
from tests.support.services import app_slot

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


@SIZES
def test_pushback_with_follow_ups(snap_compare, drill_home, monkeypatch, size):
    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), []))
    clock = FakeClock()
    app = CodingApp(CodingSession.create(default_rounds_dir(), now=clock), app_slot())

    async def run_before(pilot) -> None:
        await pilot.press("f3", "f3", "f3", "f3")
        await until(pilot, lambda: isinstance(app.screen, FollowUpScreen))  # issue 37: one
        await pilot.app.workers.wait_for_complete()  # question at a time, on its own clock
        await pilot.press(*[c if c != " " else "space" for c in "I restart from step 9"])
        clock.advance(125)
        app.screen.tick_now()
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_notebook_round(snap_compare, drill_home, monkeypatch, size):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(
        coding_round.CodingRoundScreen, "_notebook_label", lambda self: "/home/me/round.ipynb"
    )
    clock = FakeClock()
    session = CodingSession.create(default_rounds_dir(), now=clock, notebook=True)
    saved = 1_767_225_600 * 10**9  # 2026-01-01 00:00:00 UTC
    os.utime(session.notebook_path, ns=(saved, saved))
    app = CodingApp(session, app_slot())

    async def run_before(pilot) -> None:
        await until(pilot, lambda: "lines" in text_of(pilot, "#notebook-panel"))
        clock.advance(65)
        app.screen.tick_now()
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
    time.tzset()
