"""Snapshots of the coding round at 120x40 and at 80x24: the clock bar, the contract, the editor
and the footer's essential keys (grade, next phase, end) stay visible. Update with
`pytest tests/drill/tui/screens/test_coding_snapshots.py --snapshot-update`."""

from __future__ import annotations

import pytest

from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.tui.screens.coding_round import CodingApp
from tests.support.clocks import FakeClock
from tests.support.pilot import steady_cursors
from tests.support.services import app_slot


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_coding_screen(snap_compare, drill_home, size):
    clock = FakeClock()
    app = CodingApp(CodingSession.create(default_rounds_dir(), now=clock), app_slot())

    async def run_before(pilot) -> None:
        await pilot.pause()
        clock.advance(65)
        app.screen.tick_now()
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
