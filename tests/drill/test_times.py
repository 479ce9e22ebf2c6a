"""The learner's day across DST changes (drill.times): a day starts at 04:00 local time with
*that date's* UTC offset. Europe/Berlin: clocks go forward on 29 March 2026 (02:00 -> 03:00,
CET +1 -> CEST +2) and back on 25 October 2026 (03:00 -> 02:00)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from drill.times import day_start, days_between, learner_date, next_day_start, start_of

BERLIN = ZoneInfo("Europe/Berlin")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


@pytest.fixture
def berlin_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's local zone set to Berlin (what the app uses when no zone is passed)."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# (a moment, the start of its learner day, the start of the next) in UTC
CASES = [
    # 03:30 CEST on the spring-forward Sunday: still Saturday's day, which began at 04:00 CET
    (utc(2026, 3, 29, 1, 30), utc(2026, 3, 28, 3, 0), utc(2026, 3, 29, 2, 0)),
    # noon CEST that Sunday: its day began 04:00 CEST; the Saturday->Sunday day was 23 hours
    (utc(2026, 3, 29, 10, 0), utc(2026, 3, 29, 2, 0), utc(2026, 3, 30, 2, 0)),
    # 03:30 CET on the fall-back Sunday: Saturday's day, begun at 04:00 CEST, 25 hours long
    (utc(2026, 10, 25, 2, 30), utc(2026, 10, 24, 2, 0), utc(2026, 10, 25, 3, 0)),
    (utc(2026, 10, 25, 12, 0), utc(2026, 10, 25, 3, 0), utc(2026, 10, 26, 3, 0)),
]


@pytest.mark.parametrize(("moment", "start", "following"), CASES)
def test_day_start_uses_the_offset_of_that_date_in_a_zone(
    moment: datetime, start: datetime, following: datetime
) -> None:
    assert day_start(moment, 4, BERLIN) == start
    assert next_day_start(moment, 4, BERLIN) == following


@pytest.mark.parametrize(("moment", "start", "following"), CASES)
def test_day_start_uses_the_offset_of_that_date_in_local_time(
    berlin_local_time: None, moment: datetime, start: datetime, following: datetime
) -> None:
    assert day_start(moment) == start
    assert next_day_start(moment) == following


def test_every_moment_of_a_dst_month_lies_in_its_learner_day(berlin_local_time: None) -> None:
    moment = utc(2026, 3, 20, 0, 10)
    while moment < utc(2026, 4, 5):
        start, following = day_start(moment), next_day_start(moment)
        assert start <= moment < following, moment
        assert learner_date(moment) == start.astimezone(BERLIN).date()
        assert start.astimezone(BERLIN).hour == 4 and following.astimezone(BERLIN).hour == 4
        moment += timedelta(minutes=20)


def test_start_of_a_date_and_days_between() -> None:
    assert start_of(date(2026, 3, 29), 4, BERLIN) == utc(2026, 3, 29, 2, 0)
    assert start_of(date(2026, 3, 28), 4, BERLIN) == utc(2026, 3, 28, 3, 0)
    # 23:30 before the change to 04:30 after it: one learner day apart, 4 hours apart
    assert days_between(utc(2026, 3, 28, 22, 30), utc(2026, 3, 29, 2, 30), 4, BERLIN) == 1
    assert days_between(utc(2026, 3, 28, 22, 30), utc(2026, 3, 29, 1, 30), 4, BERLIN) == 0
