"""The one rule for ratings from outside the review screen (drill.review.outside): a new card is
not rated, nothing goes past the day's new-card limit, a card not due is logged with its schedule
kept (as custom study does), a due card is rescheduled. A fixed clock throughout."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from drill.paths import database_path
from drill.review.outside import LOGGED, NEW, RESCHEDULED, rate_from_outside
from drill.settings import Settings
from drill.times import learner_date
from storage.db import open_database
from tests.support.review_logs import LogBuilder

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def rows() -> list[tuple[str, int]]:
    conn = sqlite3.connect(database_path())
    try:
        return conn.execute("SELECT card_id, rating FROM review_log ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture
def db():
    builder = LogBuilder(database_path())
    builder.card("due-card", "d", due=NOW - timedelta(days=1), interval_days=10)
    builder.card("ahead-card", "d", due=NOW + timedelta(days=5), interval_days=10)
    builder.write()
    database = open_database(database_path())
    yield database
    database.close()


def rate(db, card_id: str, rating: int = 3, settings: Settings | None = None):
    return rate_from_outside(db, card_id, "d", rating, content_hash=None, now=NOW,
                             settings=settings or Settings())  # fmt: skip


def test_a_new_card_is_not_rated_and_writes_nothing(db) -> None:
    change = rate(db, "never-seen")
    assert change.kind == NEW and not change.changed
    assert change.describe() == "never-seen: new, not rated"
    assert rows() == []
    assert db.review.card_state("never-seen") is None


def test_a_new_card_is_not_rated_with_the_new_card_limit_used_up_either(db) -> None:
    used_up = Settings(new_cards_per_day=0)
    assert rate(db, "never-seen", 1, used_up).kind == NEW
    assert rate(db, "never-seen", 3, Settings(new_cards_per_day=50)).kind == NEW  # nor with room
    assert rows() == []


def test_a_card_not_due_is_logged_and_keeps_its_schedule(db) -> None:
    before = db.review.card_state("ahead-card")
    change = rate(db, "ahead-card", 1)
    assert change.kind == LOGGED
    assert change.describe() == "ahead-card: not due, logged only"
    assert rows() == [("ahead-card", 1)]
    after = db.review.card_state("ahead-card")
    for key in ("due", "stability", "difficulty", "reps", "lapses", "state"):
        assert after[key] == before[key], key


def test_a_due_card_is_rescheduled_and_says_when_it_is_due(db) -> None:
    change = rate(db, "due-card", 3)
    assert change.kind == RESCHEDULED
    assert rows() == [("due-card", 3)]
    after = db.review.card_state("due-card")
    assert after["due"] > NOW + timedelta(days=1)
    days = (learner_date(after["due"]) - learner_date(NOW)).days  # due by learner day
    assert days > 1
    assert change.describe() == f"due-card: Good, due in {days} d"


def test_a_due_card_is_still_rated_with_the_new_card_limit_used_up(db) -> None:
    assert rate(db, "due-card", 2, Settings(new_cards_per_day=0)).kind == RESCHEDULED


def test_a_rating_outside_1_to_4_is_refused(db) -> None:
    with pytest.raises(ValueError):
        rate(db, "due-card", 5)
    assert rows() == []
