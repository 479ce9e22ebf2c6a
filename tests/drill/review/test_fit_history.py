"""The fit's review histories: a reset starts a card's history afresh (as Anki's fit leaves out
the reviews before a reset), and delta_t is counted in the learner days the scheduler uses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from drill.review.optimize import review_histories
from drill.review.review_log import LoggedReview, read_review_log
from drill.review.scheduler import make_scheduler, rate_card
from drill.settings import Settings
from drill.times import days_between
from storage.db import open_database

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
BERLIN = ZoneInfo("Europe/Berlin")


def test_a_reset_starts_the_cards_history_afresh(tmp_path: Path) -> None:
    db = open_database(tmp_path / "drill.sqlite3")
    try:
        settings = Settings()
        scheduler = make_scheduler(settings, fuzzing=False)

        def rate(card: str, days: float, rating: int) -> None:
            rate_card(db, card, "d", rating, content_hash=None, now=T0 + timedelta(days=days),
                      settings=settings, scheduler=scheduler)  # fmt: skip

        for days, rating in ((0, 3), (2, 3), (6, 1), (7, 3)):  # before the reset
            rate("a", days, rating)
        rate("b", 0, 3)
        rate("b", 3, 3)
        assert db.review.reset_schedule("a")
        rate("a", 20, 3)
        rate("a", 23, 2)
        reviews = read_review_log(db)
    finally:
        db.close()
    histories = review_histories(reviews, day_start_hour=4, tz=UTC)
    assert sorted(histories) == sorted([[(3, 0), (2, 3)], [(3, 0), (3, 3)]])  # a after; b


def test_a_card_reset_and_not_reviewed_since_has_no_history_in_the_fit(tmp_path: Path) -> None:
    db = open_database(tmp_path / "drill.sqlite3")
    try:
        settings = Settings()
        scheduler = make_scheduler(settings, fuzzing=False)

        def rate(card: str, days: float, rating: int) -> None:
            rate_card(db, card, "d", rating, content_hash=None, now=T0 + timedelta(days=days),
                      settings=settings, scheduler=scheduler)  # fmt: skip

        for card in ("a", "b"):
            for days, rating in ((0, 3), (2, 3), (6, 1)):
                rate(card, days, rating)
        db.review.set_suspended("c", "d", True)  # a flag-only row: new, never reviewed
        assert db.review.reset_schedule("a")  # the last thing that happened to a
        reviews = read_review_log(db)
    finally:
        db.close()
    assert len(reviews) == 6  # the log keeps a's reviews (the CSV export shows them)
    assert {r.card_id for r in reviews if r.reset_after} == {"a"}
    histories = review_histories(reviews, day_start_hour=4, tz=UTC)
    assert sorted(histories) == [[(3, 0), (3, 2)], [(3, 0), (3, 2), (1, 4)]]  # b's only


def test_the_fit_and_the_scheduler_count_the_same_learner_days() -> None:
    evening = datetime(2026, 3, 28, 21, 0, tzinfo=UTC)  # 22:00 CET, the eve of the DST change
    for hours in (5, 6, 30, 31):
        later = evening + timedelta(hours=hours)
        reviews = [LoggedReview("a", evening, 3, 0, 0), LoggedReview("a", later, 3, 1, 0)]
        steps = review_histories(reviews, day_start_hour=4, tz=BERLIN)
        delta = steps[0][-1][1] if steps else 0
        assert delta == days_between(evening, later, 4, BERLIN), hours
