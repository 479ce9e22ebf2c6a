"""The talk round's checklist (GradingScreen): keys move (up/down, j/k), space flips, enter
confirms and only then rates; n saves the grades without rating any card (issue 37)."""

from __future__ import annotations

import random

import pytest
from textual.widgets import Checkbox

from drill.mock.round import MockRun
from drill.tui.screens.mock_report import BulletBox, GradingScreen, ReportScreen
from drill.tui.screens.mock_round import MockApp
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, recording_rater, tiny_round
from tests.support.pilot import run_async, until


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path):  # type: ignore[no-untyped-def]
    s = open_store(tmp_path / "drill.sqlite3")
    yield s
    s.db.close()


def answered_round(store, clock) -> MockRun:  # type: ignore[no-untyped-def]
    run = MockRun.start_new(store, tiny_round(), CARDS, minutes=1, rng=random.Random(1), now=clock)
    run.start()
    for prompt in run.prompts:
        run.set_answer(prompt.id, "no idea")  # answered: a card behind it may be rated
    clock.advance(1000)
    run.tick()
    return run


@run_async
async def test_enter_confirms_and_rates_only_then(store, clock) -> None:
    run = answered_round(store, clock)
    rated: list[tuple[str, str, int]] = []
    app = MockApp(run, rate=recording_rater(rated), tick_s=3600, autosave_s=3600)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, GradingScreen))
        await until(pilot, lambda: isinstance(app.focused, Checkbox))
        first = app.focused
        await pilot.press("space")  # flips the focused bullet
        assert isinstance(first, BulletBox) and first.value
        await pilot.press("j")
        assert app.focused is not first
        await pilot.press("k")
        assert app.focused is first
        assert rated == []  # nothing rated while the checklist is open
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReportScreen))
    assert rated  # the card prompt's bullets stay unticked: rated on confirm


@run_async
async def test_n_saves_the_grades_without_rating(store, clock) -> None:
    run = answered_round(store, clock)
    rated: list[tuple[str, str, int]] = []
    app = MockApp(run, rate=recording_rater(rated), tick_s=3600, autosave_s=3600)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, GradingScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ReportScreen))
    assert rated == []
    assert store.report(run.round_id).band  # the grades are saved all the same
