"""The plan's day budget counts the minutes already spent today (issue 33): the review log's
measured answer times (Snapshot.recent_answers) and the reviews still due, so new cards stop
when the day's real minutes reach the budget, and a day cheaper than priced gets more. A fixed
clock on learner days in Berlin."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from drill.review.deadline import DEFAULT_DECAY, Deadline
from drill.review.pacing import REVIEW_ANSWERS, SHORT_SHARE, day_quota
from drill.review.queue import review_day
from drill.settings import Settings
from drill.times import start_of
from storage.snapshot import ScheduleRow, Snapshot

BERLIN = ZoneInfo("Europe/Berlin")
HOUR = 4
DAY = date(2026, 3, 31)  # the interview
TODAY = DAY - timedelta(days=12)
MORNING = datetime(2026, 3, 19, 9, tzinfo=BERLIN)
IDS = [f"n{i:04}" for i in range(1000)]  # more than a 30-minute budget introduces: short


def plan() -> Deadline:
    return Deadline(DAY, 0.9, 30, dict.fromkeys(IDS, 1.0), DEFAULT_DECAY, seconds_per_review=20.0)


def introduced(card_id: str, at: datetime, state: int = 2, due_in: timedelta = timedelta(days=3)
               ) -> ScheduleRow:  # fmt: skip
    when = at.astimezone(UTC)
    return ScheduleRow(card_id, "d", state, when + due_in, False, None, None, when,
                       last_review=when, stability=3.0, difficulty=5.0)  # fmt: skip


def snapshot(rows: dict[str, ScheduleRow], answers: list[tuple[datetime, float]]) -> Snapshot:
    newest_first = tuple((at.astimezone(UTC), s) for at, s in reversed(answers))
    return Snapshot(rows, recent_answers=newest_first)


def todays_new_cards(count: int, seconds_each: float) -> tuple[dict, list]:  # type: ignore[type-arg]
    """`count` cards introduced this morning, each answered once taking `seconds_each`."""
    rows, answers = {}, []
    for i in range(count):
        at = MORNING + timedelta(minutes=i)
        rows[IDS[i]] = introduced(IDS[i], at)
        answers.append((at, seconds_each))
    return rows, answers


def new_left(snap: Snapshot, now: datetime) -> int:
    day = review_day(now, Settings(day_start_hour=HOUR), snap, plan())
    return day.new_limit - day.introduced_today


def test_new_cards_stop_when_todays_real_minutes_reach_the_budget() -> None:
    rows, answers = todays_new_cards(10, 180.0)  # 10 cards took 30 minutes: the whole budget
    now = MORNING + timedelta(minutes=40)
    assert new_left(snapshot(rows, answers), now) == 0
    # the estimate from the day's start alone (nothing spent) would offer more
    assert new_left(snapshot(rows, []), now) > 0


def test_a_day_cheaper_than_priced_gets_more_new_cards() -> None:
    rows, answers = todays_new_cards(10, 6.0)  # 10 cards in one minute
    now = MORNING + timedelta(minutes=15)
    per_card = plan().new_card_seconds
    room = SHORT_SHARE * plan().budget_seconds - 10 * 6.0
    assert new_left(snapshot(rows, answers), now) == math.floor(room / per_card)


def test_the_reviews_still_due_today_count_before_new_cards() -> None:
    start = start_of(TODAY, HOUR, BERLIN)
    rows = {}
    for i in range(10):  # reviews due today, not yet answered (within the review cap)
        last = start - timedelta(days=4)
        rows[IDS[i]] = ScheduleRow(IDS[i], "d", 2, start, False, None, None, last,
                                   last_review=last, stability=4.0, difficulty=5.0)  # fmt: skip
    answers = [(MORNING, 600.0)]  # ten minutes already spent on something answered today
    deadline = replace(plan(), final_pass_days=0)  # short of budget: as review_day fits it
    spent = 600.0
    due_seconds = 10 * REVIEW_ANSWERS * deadline.seconds_per_review
    quota = day_quota(rows, deadline, MORNING, HOUR, BERLIN, spent_seconds=spent)
    room = SHORT_SHARE * deadline.budget_seconds - spent - due_seconds
    assert quota == math.floor(room / deadline.new_card_seconds)
    assert new_left(snapshot(rows, answers), MORNING) == quota
