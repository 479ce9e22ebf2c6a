"""FSRS scheduling: intervals grow under repeated Good; Again brings a card back the same day."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from drill.decks.index import DeckOutline
from drill.review.due import due_counts
from drill.review.queue import (
    build_queue,
    day_start,
    new_remaining,
    next_day_start,
    queue_for,
    review_day,
)
from drill.review.scheduler import make_scheduler, next_state, preview_intervals
from drill.settings import Settings
from storage.snapshot import ScheduleRow, Snapshot

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_intervals_grow_under_repeated_good() -> None:
    scheduler = make_scheduler(Settings())
    state, now, intervals = None, T0, []
    for _ in range(8):
        state = next_state(scheduler, state, 3, now)
        intervals.append(state["due"] - now)
        now = state["due"]
    assert intervals[0] < timedelta(hours=1)  # a new card first walks a learning step
    graduated = intervals[1:]
    assert all(b > a for a, b in itertools.pairwise(graduated)), intervals
    assert intervals[-1] > timedelta(days=30)
    assert state["reps"] == 8 and state["state"] == 2


def test_again_brings_the_card_back_the_same_day() -> None:
    scheduler = make_scheduler(Settings())
    state, now = None, T0
    for _ in range(5):  # a well-known card, due weeks ahead
        state = next_state(scheduler, state, 3, now)
        now = state["due"]
    assert state["stability"] > 30
    lapsed = next_state(scheduler, state, 1, now)
    assert lapsed["due"] - now < timedelta(hours=1)
    assert lapsed["lapses"] == 1 and lapsed["state"] == 3  # relearning


def test_higher_retention_gives_shorter_intervals() -> None:
    low, high = (
        make_scheduler(Settings(desired_retention=0.8)),
        make_scheduler(Settings(desired_retention=0.97)),
    )
    reviewed = next_state(low, next_state(low, None, 3, T0), 3, T0 + timedelta(minutes=10))
    at = reviewed["due"]
    assert preview_intervals(high, reviewed, at)[3] < preview_intervals(low, reviewed, at)[3]


def test_preview_orders_ratings() -> None:
    preview = preview_intervals(make_scheduler(Settings()), None, T0)
    assert preview[1] < preview[3] < preview[4]
    assert preview[1] <= timedelta(minutes=1)


def row(card_id: str, due: datetime | None, **flags: object) -> ScheduleRow:
    values = {
        "card_id": card_id,
        "deck_id": "d",
        "state": None if due is None else 2,
        "due": due,
        "suspended": False,
        "buried_until": None,
        "content_hash": None,
        "introduced_at": None,
    }
    values.update(flags)
    return ScheduleRow(**values)  # type: ignore[arg-type]


def test_queue_due_first_oldest_first_then_new_up_to_limit() -> None:
    outline = [
        DeckOutline("d", "D", ("n1", "late", "n2", "early", "future", "susp", "buried", "n3")),
        DeckOutline("e", "E", ("n4",)),
    ]
    schedules = {
        "late": row("late", T0 - timedelta(hours=1)),
        "early": row("early", T0 - timedelta(days=2)),
        "future": row("future", T0 + timedelta(days=1)),
        "susp": row("susp", T0 - timedelta(days=5), suspended=True),
        "buried": row("buried", None, buried_until=T0 + timedelta(hours=3)),
    }
    queue = build_queue(outline, schedules, T0, new_limit=5, introduced_today=2)
    assert [(e.card_id, e.is_new) for e in queue] == [
        ("early", False),
        ("late", False),
        ("n1", True),
        ("n2", True),
        ("n3", True),
    ]
    one_deck = build_queue(outline, schedules, T0, new_limit=5, introduced_today=0, deck_id="e")
    assert [e.card_id for e in one_deck] == ["n4"]
    assert build_queue(outline, schedules, T0, new_limit=2, introduced_today=2)[2:] == []


def test_day_boundary_is_local_4am() -> None:
    now = datetime(2026, 3, 2, 12, 0).astimezone()
    start, tomorrow = day_start(now), next_day_start(now)
    assert (start.hour, tomorrow.hour) == (4, 4)
    assert start <= now < tomorrow and tomorrow - start == timedelta(days=1)
    early = datetime(2026, 3, 2, 3, 0).astimezone()
    assert day_start(early).day == 1


def test_review_day_is_the_one_day_and_new_card_budget() -> None:
    now = datetime(2026, 3, 2, 12, 0).astimezone()
    start, tomorrow = day_start(now, 6), next_day_start(now, 6)
    snapshot = Snapshot(
        schedules={
            "before": row("before", T0, introduced_at=start - timedelta(seconds=1)),
            "at": row("at", T0, introduced_at=start),
            "later": row("later", T0, introduced_at=now),
            "never": row("never", None),
        }
    )
    day = review_day(now, Settings(new_cards_per_day=3, day_start_hour=6), snapshot)
    assert (day.start, day.next_start) == (start, tomorrow)
    assert (day.new_limit, day.introduced_today) == (3, 2)
    assert new_remaining(day.new_limit, day.introduced_today) == 1
    over = review_day(now, Settings(new_cards_per_day=1), snapshot)
    assert new_remaining(over.new_limit, over.introduced_today) == 0  # never negative


def test_queue_for_and_due_counts_share_the_days_budget() -> None:
    outline = [DeckOutline("d", "D", ("n1", "n2", "n3")), DeckOutline("e", "E", ("n4", "n5"))]
    snapshot = Snapshot(schedules={})
    day = review_day(T0, Settings(new_cards_per_day=3), snapshot)
    queue = queue_for(outline, snapshot.schedules, T0, day)
    summaries, total = due_counts(outline, snapshot.schedules, T0, day)
    assert [e.card_id for e in queue] == ["n1", "n2", "n3"]
    assert [s.new for s in summaries] == [3, 2] and total == {"due": 0, "new": 3}
