"""The daily new-card limit counts the cards introduced today up to now: a review dated in the
future (a clock that was once set wrong) is not one of today's and takes no new card."""

from __future__ import annotations

from datetime import datetime, timedelta

from drill.decks.index import DeckOutline
from drill.review.due import due_counts
from drill.review.queue import day_start, new_remaining, queue_for, review_day
from drill.settings import Settings
from storage.snapshot import ScheduleRow, Snapshot

NOW = datetime(2026, 3, 2, 12, 0).astimezone()  # the fixed clock


def introduced(card_id: str, when: datetime) -> ScheduleRow:
    return ScheduleRow(
        card_id=card_id,
        deck_id="d",
        state=2,
        due=NOW + timedelta(days=30),
        suspended=False,
        buried_until=None,
        content_hash=None,
        introduced_at=when,
    )


def test_reviews_dated_after_now_do_not_use_up_todays_new_cards() -> None:
    start = day_start(NOW, 4)
    snapshot = Snapshot(
        schedules={
            "today": introduced("today", start + timedelta(hours=1)),
            "in-an-hour": introduced("in-an-hour", NOW + timedelta(hours=1)),
            "next-year": introduced("next-year", NOW + timedelta(days=365)),
        }
    )
    assert snapshot.introduced_since(start, until=NOW) == 1
    day = review_day(NOW, Settings(new_cards_per_day=3, day_start_hour=4), snapshot)
    assert day.introduced_today == 1 and new_remaining(day.new_limit, day.introduced_today) == 2
    outline = [DeckOutline("d", "D", ("today", "in-an-hour", "next-year", "n1", "n2", "n3"))]
    offered = [e.card_id for e in queue_for(outline, snapshot.schedules, NOW, day) if e.is_new]
    assert offered == ["n1", "n2"]
    _, total = due_counts(outline, snapshot.schedules, NOW, day)
    assert total["new"] == 2
