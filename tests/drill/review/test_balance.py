"""The interview plan's load balance (drill.review.balance), with a fixed clock: a cap on what
today shows (weakest first, the rest a day later, past the eve to the date), review ahead onto
lighter days within the final window only, the room cards reviewed today take, the preview
that equals the balanced queue, and the first day priced at the slow end of answer times."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from drill.review.balance import review_capacity
from drill.review.deadline import (
    DEFAULT_DECAY,
    DEFAULT_SECONDS_PER_REVIEW,
    UNMEASURED_SECONDS_PER_REVIEW,
    Deadline,
    planned_due,
    planned_schedules,
    row_from_state,
)
from drill.review.pacing import day_quota
from drill.times import learner_date, start_of
from storage.schema_names import StateDict
from storage.snapshot import ScheduleRow

ZONE = ZoneInfo("UTC")
HOUR = 4
DATE = date(2026, 5, 20)  # the interview


def deadline(minutes: int = 2, final_pass_days: int = 0, **changes: object) -> Deadline:
    """2 minutes: room for 4 reviews a day (0.85 x 120 s / (1.25 x 20 s))."""
    base: dict[str, object] = {
        "interview_day": DATE,
        "target_recall": 0.9,
        "minutes_per_day": minutes,
        "card_values": {},
        "decay": DEFAULT_DECAY,
        "final_pass_days": final_pass_days,
    }
    base.update(changes)
    return Deadline(**base)  # type: ignore[arg-type]


def at(day: date, hour: int = 9) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=ZONE)


def review_row(
    card_id: str, last: date, due: date, stability: float = 10.0, introduced: date | None = None
) -> ScheduleRow:
    return ScheduleRow(
        card_id=card_id,
        deck_id="d",
        state=2,
        due=start_of(due, HOUR, ZONE).astimezone(UTC),
        suspended=False,
        buried_until=None,
        content_hash=None,
        introduced_at=at(introduced or last - timedelta(days=5)).astimezone(UTC),
        last_review=at(last).astimezone(UTC),
        stability=stability,
        difficulty=5.0,
    )


def planned_days(rows: dict[str, ScheduleRow], plan: Deadline, now: datetime) -> dict[str, date]:
    planned = planned_schedules(rows, plan, now, HOUR, ZONE)
    return {cid: learner_date(row.due, HOUR, ZONE) for cid, row in planned.items() if row.due}


def due_today(rows: dict[str, ScheduleRow], plan: Deadline, now: datetime) -> set[str]:
    today = learner_date(now, HOUR, ZONE)
    return {cid for cid, day in planned_days(rows, plan, now).items() if day <= today}


def test_the_capacity_is_the_planned_share_of_the_budget() -> None:
    assert review_capacity(deadline()) == 4
    assert review_capacity(deadline(minutes=45, seconds_per_review=25.0)) == 73


def test_today_shows_no_more_reviews_than_the_budget_holds_weakest_first() -> None:
    today = DATE - timedelta(days=10)
    # six cards due today; the lower the stability, the lower the recall on the date
    rows = {f"c{i}": review_row(f"c{i}", today - timedelta(days=4), today, 2.0 + i)
            for i in range(6)}  # fmt: skip
    days = planned_days(rows, deadline(), at(today))
    assert {cid for cid, day in days.items() if day == today} == {"c0", "c1", "c2", "c3"}
    assert days["c4"] == days["c5"] == today + timedelta(days=1)  # wait a day
    # without a plan: all six are due today
    assert len(due_today(rows, None, at(today))) == 6  # type: ignore[arg-type]


def test_the_cards_shown_stay_the_same_while_the_day_goes_on() -> None:
    today = DATE - timedelta(days=10)
    rows = {f"c{i}": review_row(f"c{i}", today - timedelta(days=4), today, 2.0 + i)
            for i in range(6)}  # fmt: skip
    shown = due_today(rows, deadline(), at(today))
    # the learner rates c2 (shown): it is due in a week now, and takes one place of today's room
    rows["c2"] = review_row("c2", today, today + timedelta(days=7), 8.0,
                            introduced=today - timedelta(days=9))  # fmt: skip
    assert due_today(rows, deadline(), at(today, 10)) == shown - {"c2"}


def test_a_learning_card_due_today_takes_a_place_of_the_room() -> None:
    today = DATE - timedelta(days=10)
    rows = {f"c{i}": review_row(f"c{i}", today - timedelta(days=4), today, 2.0 + i)
            for i in range(4)}  # fmt: skip
    relearning = review_row("r", today - timedelta(days=1), today, 1.0)
    rows["r"] = replace(relearning, state=3, due=at(today, 8).astimezone(UTC))
    assert due_today(rows, deadline(), at(today)) == {"r", "c0", "c1", "c2"}


def test_on_the_eve_the_rest_waits_for_the_date_then_plain_fsrs() -> None:
    eve = DATE - timedelta(days=1)
    rows = {f"c{i}": review_row(f"c{i}", eve - timedelta(days=4), eve, 2.0 + i)
            for i in range(6)}  # fmt: skip
    days = planned_days(rows, deadline(), at(eve))
    assert days["c4"] == days["c5"] == DATE
    # on the date the plan is over: the stored FSRS due (the eve, overdue) again
    after = planned_schedules(rows, deadline(), at(DATE), HOUR, ZONE)
    assert after is rows


def test_the_eves_overflow_comes_earlier_in_the_final_window() -> None:
    plan = deadline(final_pass_days=3)  # window: 3 days before the date
    first = DATE - timedelta(days=3)
    today = first + timedelta(days=1)
    # six cards introduced before the window, last seen on its first day, weak on the date
    # (stability 1 day): the peak on the day puts them all on the eve; room for 4 there
    rows = {f"c{i}": review_row(f"c{i}", first, DATE + timedelta(days=1), 1.0 + 0.1 * i)
            for i in range(6)}  # fmt: skip
    days = planned_days(rows, plan, at(today))
    eve = DATE - timedelta(days=1)
    assert sorted(cid for cid, day in days.items() if day == eve) == ["c0", "c1", "c2", "c3"]
    assert days["c4"] == days["c5"] == today  # the strongest two come a day earlier


def test_no_review_is_pulled_before_the_final_window() -> None:
    plan = deadline(final_pass_days=3)
    today = DATE - timedelta(days=8)  # the window starts in 5 days
    # twelve cards due before the window on one day (room 4) stay on it; none comes today
    rows = {f"p{i}": review_row(f"p{i}", today - timedelta(days=3), today + timedelta(days=2))
            for i in range(12)}  # fmt: skip
    days = planned_days(rows, plan, at(today))
    assert set(days.values()) == {today + timedelta(days=2)}


def test_the_preview_shows_the_day_the_balance_gives() -> None:
    values = {f"c{i:02}": 1.0 for i in range(14)} | {"c99": 10.0}
    plan = deadline(final_pass_days=3, card_values=values)
    today = DATE - timedelta(days=5)  # the window starts in 2 days
    # fifteen cards for the final pass, 5 a day with room for 4: one of each day's run comes
    # a day earlier (never before the window); c99, the most valuable, is in the eve's run
    rows = {cid: review_row(cid, today - timedelta(days=3), DATE + timedelta(days=30), 5.0)
            for cid in values}  # fmt: skip
    # rating c99 now makes it the strongest card of the eve's run: the one that comes earlier
    after: StateDict = {
        "state": 2,
        "due": start_of(DATE + timedelta(days=40), HOUR, ZONE).astimezone(UTC),
        "last_review": at(today).astimezone(UTC),
        "introduced_at": at(today - timedelta(days=9)).astimezone(UTC),
        "stability": 60.0,
        "difficulty": 5.0,
    }
    shown = planned_due(rows, plan, "c99", "d", after, at(today), HOUR, ZONE)
    rows["c99"] = row_from_state("c99", "d", after)
    queued = planned_schedules(rows, plan, at(today), HOUR, ZONE)["c99"].due
    assert shown == queued
    assert learner_date(shown, HOUR, ZONE) == DATE - timedelta(days=2)  # not the eve
    # the eve and the day before keep 4 each; the window's first day takes the rest (there
    # the cap on today makes the weakest wait a day, once it is today)
    days = planned_days(rows, plan, at(today))
    first = DATE - timedelta(days=3)
    assert Counter(days.values()) == {
        first: 7,
        first + timedelta(days=1): 4,
        DATE - timedelta(days=1): 4,
    }


def test_before_any_answer_is_measured_the_day_is_priced_at_the_slow_end() -> None:
    values = {f"n{i:03}": 1.0 for i in range(200)}
    today = DATE - timedelta(days=7)  # 4 introduction days: twice the pace is 100
    measured = deadline(minutes=45, final_pass_days=3, card_values=values)
    unmeasured = deadline(minutes=45, final_pass_days=3, card_values=values, measured=False)
    assert measured.seconds_per_review == DEFAULT_SECONDS_PER_REVIEW
    # 0.85 x 2700 s at 3 answers a new card: 20 s an answer -> 38 cards, 25 s -> 30
    assert day_quota({}, measured, at(today), HOUR, ZONE) == 38
    assert UNMEASURED_SECONDS_PER_REVIEW == 25.0
    assert day_quota({}, unmeasured, at(today), HOUR, ZONE) == 30
