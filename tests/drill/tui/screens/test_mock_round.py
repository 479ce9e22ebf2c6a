"""Pilot test: a compressed round (1 minute, fake clock driven by the test) through to the report.
(No async pytest plugin is installed: the async body runs under asyncio.run.)"""

from __future__ import annotations

import asyncio
import random

import pytest
from textual.geometry import Region
from textual.widgets import Static

from drill.mock.round import MockRun
from drill.tui.screens.mock_report import BulletBox, GradingScreen, ReportScreen
from drill.tui.screens.mock_round import AnswerArea, MockApp, MockRoundScreen
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, recording_rater, tiny_round
from tests.support.pilot import Notices


@pytest.fixture
def clock() -> FakeClock:
    """A mock round's monotonic clock, moved by hand."""
    return FakeClock()


async def type_text(pilot, text: str) -> None:
    await pilot.press(*["space" if ch == " " else ch for ch in text])


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "drill.sqlite3")
    yield s
    s.db.close()


def test_a_compressed_round_plays_through_to_the_report(store, clock):
    asyncio.run(_play_compressed_round(store, clock))


async def _play_compressed_round(store, clock):
    run = MockRun.start_new(store, tiny_round(), CARDS, minutes=1, rng=random.Random(1), now=clock)
    rated: list[tuple[str, str, int]] = []
    app = MockApp(run, rate=recording_rater(rated), tick_s=3600, autosave_s=3600)
    notices = Notices()
    async with app.run_test(size=(100, 40), message_hook=notices) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MockRoundScreen)
        assert text_of(screen, "#phase-name") == "Phase 1/2: Phase one"
        assert text_of(screen, "#phase-clock") == "Phase 0:20"
        assert text_of(screen, "#total-clock") == "Total 1:00 left"

        await type_text(pilot, "optimizer state and RNG")
        first = run.phase_prompts(0)[0]
        assert run.answers[first.id] == "optimizer state and RNG"

        clock.advance(17)
        screen.tick_now()
        await pilot.pause()
        assert screen.query_one("#phase-clock").has_class("warning")

        # pause: time does not move, the answer box is read-only
        await pilot.press("f2")
        assert text_of(screen, "#run-state") == "PAUSED (F2 resumes)"
        assert all(area.read_only for area in screen.query(AnswerArea))
        clock.advance(300)
        screen.tick_now()
        assert text_of(screen, "#phase-clock") == "Phase 0:03"
        await pilot.press("f2")
        assert text_of(screen, "#run-state") == ""

        # the bell: a notice, the next phase, and the typing saved on the phase change
        clock.advance(4)
        screen.tick_now()
        await pilot.pause()
        assert any("Time is up for: Phase one" in text for text in notices.messages())
        assert text_of(screen, "#phase-name") == "Phase 2/2: Phase two"
        assert store.load(run.round_id).prompts[0].answer == "optimizer state and RNG"
        await pilot.pause()
        await type_text(pilot, "no idea")

        # hard stop at the end of the total budget
        clock.advance(45)
        screen.tick_now()
        await pilot.pause()
        grading = app.screen
        assert isinstance(grading, GradingScreen)
        boxes = {(b.prompt_id, b.index): b for b in grading.query(BulletBox)}
        assert [boxes[(first.id, i)].value for i in range(3)] == [True, False, True]
        card_prompt = run.phase_prompts(1)[0]
        boxes[(card_prompt.id, 0)].value = True  # the user corrects the pre-check

        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ReportScreen)
        report = store.report(run.round_id)
        assert report.band == "developing"  # 3 of 5 bullets
        assert rated == [(card_prompt.card_id, "test-deck", 2)]
        assert report.phases[0].used_s == pytest.approx(20)
        await pilot.press("q")


def test_title_shows_the_real_length_and_a_focused_bullet_keeps_its_text(store, clock):
    asyncio.run(_title_and_focused_bullet(store, clock))


async def _title_and_focused_bullet(store, clock):
    definition = tiny_round().model_copy(update={"title": "Tiny round (3 min)"})
    run = MockRun.start_new(store, definition, CARDS, minutes=1, rng=random.Random(1), now=clock)
    app = MockApp(run, tick_s=3600, autosave_s=3600)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert text_of(app.screen, "#round-title") == "Tiny round (1 min)"  # not "(3 min)"
        await pilot.press("f10", "y")
        await pilot.pause()
        assert isinstance(app.screen, GradingScreen)
        box = app.screen.query(BulletBox)[1]
        box.focus()
        await pilot.pause()
        assert box.has_focus
        assert box.content_region.height == 1  # a focus border would leave no row for the text
        lines = box.render_lines(Region(0, 0, *box.outer_size))
        assert str(box.label) in "".join(strip.text for strip in lines)


def test_ending_a_round_early_asks_first(store, clock):
    asyncio.run(_end_early_asks(store, clock))


async def _end_early_asks(store, clock):
    from drill.tui.screens.browser_dialogs import ConfirmScreen

    run = MockRun.start_new(store, tiny_round(), CARDS, minutes=1, rng=random.Random(1), now=clock)
    app = MockApp(run, tick_s=3600, autosave_s=3600)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        clock.advance(5)
        await pilot.press("f10")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        question = text_of(app.screen, "#confirm-question")
        assert question.startswith("End the round now, with 0:55 left?")
        assert not run.finished
        await pilot.press("n")  # no: the round goes on where it was
        await pilot.pause()
        assert app.screen is screen and not run.finished
        assert store.load(run.round_id).status == "running"
        await pilot.press("f10", "escape")  # escape declines too
        await pilot.pause()
        assert app.screen is screen and not run.finished
        await pilot.press("f10", "y")
        await pilot.pause()
        assert run.finished and run.clock.state.finish_reason == "ended"
        assert isinstance(app.screen, GradingScreen)
