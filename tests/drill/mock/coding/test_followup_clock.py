"""The follow-ups one at a time on their own clock (drill.mock.coding.followup_clock), on a
clock the test moves by hand."""

from __future__ import annotations

from drill.mock.coding.followup_clock import (
    MIN_SECONDS,
    Answered,
    FollowUpClock,
    answer_into_notes,
    per_question_seconds,
)
from drill.mock.coding.pushback import answers, question_block
from tests.support.clocks import FakeClock
from tests.support.followups import QUESTIONS


def test_time_per_question_shares_the_pushback_and_scales_with_the_round() -> None:
    assert per_question_seconds(15 * 60, 5) == 180  # the 55-minute round: 3 minutes each
    assert per_question_seconds(15 * 60 * 0.4, 3) == 120  # a 22-minute round
    assert per_question_seconds(30, 5) == MIN_SECONDS  # never too short to answer


def test_one_question_at_a_time_next_on_submit_or_timeout() -> None:
    clock = FakeClock()
    asked = FollowUpClock(QUESTIONS, 120, clock)
    assert asked.number == 1 and asked.remaining_s() == 120  # not started: the clock stands
    asked.start()
    clock.advance(100)
    assert asked.tick("half an answer") == [] and asked.remaining_s() == 20
    assert asked.submit("  I resumed from the newest checkpoint. ") == Answered(
        1, "I resumed from the newest checkpoint."
    )
    assert asked.number == 2 and asked.remaining_s() == 120  # a fresh clock
    clock.advance(119)
    assert asked.tick("the global batch") == []
    clock.advance(1)
    assert asked.tick("the global batch") == [Answered(2, "the global batch", timed_out=True)]
    assert asked.number == 3 and asked.question == "Which phase shows a straggler?"
    asked.pause()  # the round's clock paused: this one stops too
    clock.advance(500)
    assert asked.tick("") == [] and asked.remaining_s() == 120
    asked.start()
    clock.advance(120)
    assert asked.tick("") == [Answered(3, "", timed_out=True)]
    assert asked.finished and asked.number is None and asked.submit("late") is None


def test_a_resumed_round_goes_on_at_the_first_unanswered_question() -> None:
    asked = FollowUpClock(QUESTIONS, 120, FakeClock(), answered=["done", "  ", ""])
    assert asked.number == 2
    assert FollowUpClock(QUESTIONS, 120, FakeClock(), answered=["a", "b", "c"]).finished


def test_answers_go_under_their_heading_where_the_report_reads_them() -> None:
    notes = "Ask about GPUs.\n"
    notes = answer_into_notes(notes, QUESTIONS, Answered(2, "The global batch stays 48."))
    assert notes.startswith("Ask about GPUs.\n\n## Q1 (restart.x)\n> Why did your run")
    assert answers(notes, 3) == ["", "The global batch stays 48.", ""]
    notes = answer_into_notes(notes, QUESTIONS, Answered(3, "data wait", timed_out=True))
    notes = answer_into_notes(notes, QUESTIONS, Answered(1, "", timed_out=True))  # nothing typed
    assert answers(notes, 3) == ["", "The global batch stays 48.", "data wait"]
    again = answer_into_notes(notes, QUESTIONS, Answered(2, "Kept at 48 by accumulation."))
    assert answers(again, 3)[1] == "Kept at 48 by accumulation."  # replaced, not appended
    assert again.count("## Q") == 3 and question_block(QUESTIONS[:1]).split("\n")[0] in again
