"""The interview plan's spare minutes (drill.review.balance.spare_reviews, applied by
drill.review.queue.ReviewDay.planned), with a fixed clock: once the day's planned work is done
and budget is left, the review cards weakest on the date come today, as many as the budget
left holds; never while planned work is left, never a card rated today (its preview is the
due it gets), never on or after the date (plain FSRS)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from drill.decks.index import DeckOutline
from drill.review.balance import SPARE_FAR_DAYS, SPARE_MARGIN
from drill.review.deadline import DEFAULT_DECAY, Deadline, planned_due, recall_on, row_from_state
from drill.review.queue import ReviewDay, queue_for, review_day
from drill.settings import Settings
from drill.times import start_of
from storage.schema_names import StateDict
from storage.snapshot import ScheduleRow, Snapshot

HOUR = 4
DATE = date(2026, 5, 20)  # the interview
TODAY = DATE - timedelta(days=2)
NOW = datetime(2026, 5, 18, 9, tzinfo=UTC)
# recall on the date rises with stability: w0 is the weakest; all are above the 0.9 target
# (0.91-0.94), so the peak on the day moves none of them and no review is planned today, and
# below the target + SPARE_MARGIN, so spare minutes may bring them forward
STABILITY = {"w0": 6.0, "w1": 7.0, "w2": 8.0, "w3": 9.0, "w4": 10.0, "w5": 11.0}


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Learner days start at 04:00 local: UTC here, so the test knows where days end."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def deadline() -> Deadline:
    """2 minutes a day at 20 s an answer: 0.85 x 120 s holds 4 reviews (1.25 answers each)."""
    return Deadline(
        interview_day=DATE,
        target_recall=0.9,
        minutes_per_day=2,
        card_values=dict.fromkeys(STABILITY, 1.0),
        decay=DEFAULT_DECAY,
        final_pass_days=0,
    )


def day_start(day: date) -> datetime:
    return start_of(day, HOUR).astimezone(UTC)


def review_row(card_id: str, last: datetime, due: date) -> ScheduleRow:
    return ScheduleRow(
        card_id=card_id,
        deck_id="d",
        state=2,
        due=day_start(due),
        suspended=False,
        buried_until=None,
        content_hash=None,
        introduced_at=last - timedelta(days=5),
        last_review=last,
        stability=STABILITY[card_id],
        difficulty=5.0,
    )


def rows() -> dict[str, ScheduleRow]:
    """Every card introduced, last reviewed three days ago, due well after the date."""
    last = NOW - timedelta(days=3)
    return {cid: review_row(cid, last, DATE + timedelta(days=20)) for cid in STABILITY}


def snapshot(schedules: dict[str, ScheduleRow], spent: tuple[float, ...] = ()) -> Snapshot:
    """`spent`: answer times logged today, newest first, a minute apart before NOW."""
    answers = tuple((NOW - timedelta(minutes=i + 1), s) for i, s in enumerate(spent))
    return Snapshot(schedules, typical_answer_s=20.0, recent_answers=answers)


def due_today(day: ReviewDay, schedules: dict[str, ScheduleRow], now: datetime) -> list[str]:
    outline = [DeckOutline("d", "d", tuple(STABILITY))]
    return sorted(entry.card_id for entry in queue_for(outline, schedules, now, day))


def test_spare_minutes_bring_the_weakest_on_the_date_forward_within_the_budget() -> None:
    schedules = rows()
    day = review_day(NOW, Settings(), snapshot(schedules), deadline())
    assert due_today(day, schedules, NOW) == ["w0", "w1", "w2", "w3"]  # 4 fit, weakest first
    # 60 s already spent today: 42 s of the 102 s left, one review
    day = review_day(NOW, Settings(), snapshot(schedules, (30.0, 30.0)), deadline())
    assert due_today(day, schedules, NOW) == ["w0"]
    day = review_day(NOW, Settings(), snapshot(schedules, (60.0, 60.0)), deadline())
    assert due_today(day, schedules, NOW) == []


def test_spare_minutes_skip_cards_well_above_the_target_on_the_date() -> None:
    """A card whose recall on the date is already at the target + SPARE_MARGIN or more is not
    worth another review: the budget left stays unspent rather than ask for it."""
    recall = recall_on(30.0, (NOW - timedelta(days=3)).date(), DATE, DEFAULT_DECAY)
    assert recall >= deadline().target_recall + SPARE_MARGIN  # 0.98
    schedules = {cid: replace(row, stability=30.0) for cid, row in rows().items()}
    schedules["w0"] = rows()["w0"]  # 0.91 on the date
    day = review_day(NOW, Settings(), snapshot(schedules), deadline())
    assert due_today(day, schedules, NOW) == ["w0"]  # the budget holds 4: only w0 is asked for


def test_far_from_the_date_spare_minutes_leave_cards_fsrs_reviews_before_it() -> None:
    """More than SPARE_FAR_DAYS before the date, a card with a review planned before the date
    is left to it; a card whose next review comes after the date may come today."""
    far = datetime(2026, 4, 30, 9, tzinfo=UTC)  # 20 learner days before the date
    assert (DATE - far.date()).days > SPARE_FAR_DAYS
    last = far - timedelta(days=3)
    schedules = {
        cid: replace(review_row(cid, last, DATE + timedelta(days=20)), stability=200.0)
        for cid in STABILITY
    }  # 0.98 on the date: above the target + SPARE_MARGIN
    schedules["w0"] = replace(review_row("w0", last, DATE - timedelta(days=5)), stability=6.0)
    schedules["w1"] = replace(review_row("w1", last, DATE + timedelta(days=20)), stability=35.0)
    assert recall_on(35.0, last.date(), DATE, DEFAULT_DECAY) < 0.9 + SPARE_MARGIN  # 0.93
    day = review_day(far, Settings(), snapshot(schedules), deadline())
    assert due_today(day, schedules, far) == ["w1"]  # w0 (weaker) waits for its own review
    near = datetime(2026, 5, 8, 9, tzinfo=UTC)  # 12 days before: both, the weakest first
    day = review_day(near, Settings(), snapshot(schedules), deadline())
    assert due_today(day, schedules, near) == ["w0", "w1"]


def test_planned_work_comes_first() -> None:
    schedules = rows()
    schedules["w5"] = review_row("w5", NOW - timedelta(days=3), TODAY)  # due today
    day = review_day(NOW, Settings(), snapshot(schedules), deadline())
    assert due_today(day, schedules, NOW) == ["w5"]
    new_card = {cid: row for cid, row in schedules.items() if cid != "w5"}  # w5 never seen
    day = review_day(NOW, Settings(), snapshot(new_card), deadline())
    assert day.new_limit - day.introduced_today == 1
    assert due_today(day, new_card, NOW) == ["w5"]  # the new card, no spare review yet


def test_after_the_date_it_is_plain_fsrs() -> None:
    schedules = rows()
    after = datetime(2026, 5, 20, 9, tzinfo=UTC)
    day = review_day(after, Settings(), snapshot(schedules), deadline())
    assert day.spare == frozenset()
    assert due_today(day, schedules, after) == []


def test_a_card_rated_today_keeps_the_due_its_preview_showed() -> None:
    schedules = rows()
    plan = deadline()
    day = review_day(NOW, Settings(), snapshot(schedules), plan)
    assert "w0" in day.spare
    later = NOW + timedelta(minutes=1)
    after: StateDict = {
        "state": 2,
        "due": day_start(DATE + timedelta(days=30)),
        "last_review": later,
        "stability": 70.0,
        "difficulty": 5.0,
        "introduced_at": schedules["w0"].introduced_at,
    }
    shown = planned_due(schedules, plan, "w0", "d", after, later, HOUR)  # the preview
    rated = dict(schedules)
    rated["w0"] = row_from_state("w0", "d", after)
    day = review_day(later, Settings(), snapshot(rated, (20.0,)), plan)
    assert day.planned(rated, later)["w0"].due == shown == after["due"]
    assert "w0" not in due_today(day, rated, later)
