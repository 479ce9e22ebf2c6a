"""The learner's day of a moment (drill.review.queue.learner_date): the one computation behind
"today" in the queue and the day counts of the FSRS fit."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from drill.review.optimize import review_histories
from drill.review.queue import day_start, learner_date
from drill.review.review_log import LoggedReview

T0 = datetime(2025, 3, 3, 0, 15, tzinfo=UTC)


@pytest.mark.parametrize("hour", [0, 4, 6, 23])
def test_learner_date_is_the_date_of_the_day_start(hour: int) -> None:
    for step in range(96):  # every half hour over two days
        moment = T0 + timedelta(minutes=30 * step)
        assert learner_date(moment, hour) == day_start(moment, hour).astimezone().date(), moment


def test_before_the_day_start_hour_belongs_to_the_day_before() -> None:
    assert learner_date(datetime(2025, 3, 4, 3, 59, tzinfo=UTC), 4, UTC) == date(2025, 3, 3)
    assert learner_date(datetime(2025, 3, 4, 4, 0, tzinfo=UTC), 4, UTC) == date(2025, 3, 4)


def test_the_fit_counts_days_between_reviews_in_learner_days() -> None:
    late = datetime(2025, 3, 3, 23, 15, tzinfo=UTC)
    small_hours, morning = late + timedelta(hours=4, minutes=30), late + timedelta(hours=5)
    reviews = [LoggedReview("a", at, 3, 0 if at == late else 1, 1000)
               for at in (late, small_hours, morning)]  # fmt: skip
    # 03:45 is still the evening's learner day; 04:15 is the next one.
    assert review_histories(reviews, day_start_hour=4, tz=UTC) == [[(3, 0), (3, 0), (3, 1)]]
