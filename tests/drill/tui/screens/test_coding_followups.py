"""The pushback's follow-ups on screen, one at a time on their own clock (issue 37): ctrl+s
submits, the time running out keeps what was typed and asks the next, the round's end closes."""

from __future__ import annotations

from drill.mock.coding.followup_clock import Answered, FollowUpClock
from drill.tui.screens.coding_followups import FollowUpScreen
from tests.support.clocks import FakeClock
from tests.support.followups import QUESTIONS
from tests.support.pilot import HostApp, run_async, text_of, until


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*["space" if ch == " " else ch for ch in text])


@run_async
async def test_one_question_at_a_time_submit_then_timeout_then_the_last() -> None:
    clock = FakeClock()
    got: list[Answered] = []
    app = HostApp(FollowUpScreen(FollowUpClock(QUESTIONS, 120, clock), got.append, tick_s=0.25))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FollowUpScreen))
        assert text_of(pilot, "#followup-number") == "Follow-up Q1 of 3"
        assert text_of(pilot, "#followup-question") == QUESTIONS[0]["question"]
        await type_text(pilot, "from the newest checkpoint")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: text_of(pilot, "#followup-number") == "Follow-up Q2 of 3")
        assert got == [Answered(1, "from the newest checkpoint")]
        assert app.screen.query_one("#followup-answer").text == ""  # a fresh box
        await type_text(pilot, "global batch")
        clock.advance(60)
        await until(pilot, lambda: "1:00 left" in text_of(pilot, "#followup-clock"))
        clock.advance(60)  # the question's time is up: what was typed is kept
        await until(pilot, lambda: len(got) == 2)
        assert got[1] == Answered(2, "global batch", timed_out=True)
        assert text_of(pilot, "#followup-number") == "Follow-up Q3 of 3"
        assert "2:00 left" in text_of(pilot, "#followup-clock")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(app.dismissed))
    assert got[2] == Answered(3, "")


@run_async
async def test_the_round_ending_keeps_the_typing_and_closes() -> None:
    over: list[bool] = []
    got: list[Answered] = []
    screen = FollowUpScreen(
        FollowUpClock(QUESTIONS, 120, FakeClock()), got.append, round_over=lambda: bool(over),
        tick_s=0.25,
    )  # fmt: skip
    app = HostApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FollowUpScreen))
        await pilot.press("ctrl+s")  # Q1 left empty
        await type_text(pilot, "data wait")
        over.append(True)
        await until(pilot, lambda: bool(app.dismissed))
    assert got[1] == Answered(2, "data wait")  # kept; Q3 was never asked: nothing typed
    assert got[2] == Answered(3, "")
