"""Snapshots of the round screen, the grading checklist and the report (fake clock, fixed size,
fixed wall time, seeded prompt choice), again at 80x24 and 120x40 where the phase clock, the
prompt and the keys must stay visible. Update with
`pytest tests/drill/tui/screens --snapshot-update`."""

from __future__ import annotations

import random

import pytest
from textual.app import App

from drill.mock.round import MockRun
from drill.tui.screens.mock_report import ReportScreen
from drill.tui.screens.mock_round import MockApp
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, tiny_round


@pytest.fixture
def clock() -> FakeClock:
    """A mock round's monotonic clock, moved by hand."""
    return FakeClock()


SIZES = [pytest.param((100, 32), id="100x32"), pytest.param((80, 24), id="80x24"),
         pytest.param((120, 40), id="120x40")]  # fmt: skip


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "drill.sqlite3")
    yield s
    s.db.close()


def new_run(store, clock) -> MockRun:
    return MockRun.start_new(store, tiny_round(), CARDS, rng=random.Random(3), now=clock)


@pytest.mark.parametrize("size", SIZES)
def test_round_screen_near_the_end_of_a_phase(snap_compare, store, clock, size):
    run = new_run(store, clock)
    app = MockApp(run, tick_s=3600, autosave_s=3600)

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press(*["space" if c == " " else c for c in "optimizer state, RNG"])
        clock.advance(50)  # 10 s left of 60: the phase clock turns yellow
        app.screen.tick_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_grading_checklist_is_pre_checked_by_coverage(snap_compare, store, clock, size):
    run = new_run(store, clock)
    run.start()
    run.set_answer(run.prompts[0].id, "Adam moments and the sampler position")
    clock.advance(500)
    run.tick()
    assert run.finished
    assert snap_compare(MockApp(run), terminal_size=size)


class _ReportApp(App[None]):
    def __init__(self, screen: ReportScreen) -> None:
        super().__init__()
        self._report_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._report_screen)


@pytest.mark.parametrize("size", SIZES)
def test_report_screen(snap_compare, store, clock, size):
    run = new_run(store, clock)
    run.start()
    restart, card_prompt = run.prompts
    run.set_answer(restart.id, "Adam moments and the sampler position")
    clock.advance(40)
    run.advance()
    run.set_answer(card_prompt.id, "not sure")
    clock.advance(200)
    run.tick()
    report = run.grade({card_prompt.id: [False, False]})
    assert snap_compare(_ReportApp(ReportScreen(report)), terminal_size=size)
