"""The interview plan prices a learner day by the typical answer time at the day's start
(storage.snapshot.Snapshot.typical_answer_before, used by drill.review.queue.planned_review_day),
with a fixed clock: answers given during the day, whatever their times, never change that
day's quota or its "short of budget" decision. (Before, the median moved as the day's answers
came in and flipped the plan mid-day: the simulation measured a day +55 % over the budget.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.review.queue import ReviewDay, planned_review_day
from drill.settings import Settings
from storage.snapshot import PlanRow, Snapshot, typical_answer_seconds

INTERVIEW = date(2026, 3, 12)
NOW = datetime(2026, 3, 2, 9, tzinfo=UTC)  # ten learner days before the interview
DAY_START = datetime(2026, 3, 2, 4, tzinfo=UTC)
CARDS = 60


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Learner days start at 04:00 local: UTC here, so the test knows where days end."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def index(tmp_path: Path):  # type: ignore[no-untyped-def]
    cards = "".join(
        f"  - id: l{i}\n    level: easy\n    front: Q l{i}?\n    back: A.\n" for i in range(CARDS)
    )
    (tmp_path / "llm-scale.yaml").write_text(f"deck: llm-scale\ntitle: llm-scale\ncards:\n{cards}")
    return load_decks([tmp_path], include_bundled=False).index


def plan(minutes: int) -> PlanRow:
    return PlanRow(INTERVIEW, "training-infra", minutes, 0.9, DAY_START - timedelta(days=1))


def snapshot(minutes: int, today: list[float]) -> Snapshot:
    """20 answers of 20 s yesterday, then `today`'s answer times (a second apart up to NOW)."""
    yesterday = [(DAY_START - timedelta(hours=3, seconds=i), 20.0) for i in range(20)]
    todays = [(NOW - timedelta(seconds=i + 1), s) for i, s in enumerate(today)]
    answers = tuple(todays + yesterday)  # newest first, as storage reads them
    typical = typical_answer_seconds(answers)
    return Snapshot({}, plan=plan(minutes), typical_answer_s=typical, recent_answers=answers)


def day_at(index, minutes: int, today: list[float]) -> ReviewDay:  # type: ignore[no-untyped-def]
    return planned_review_day(NOW, Settings(), snapshot(minutes, today), index)


def test_the_typical_time_at_the_days_start_ignores_the_days_answers() -> None:
    answers = snapshot(20, [120.0] * 40).recent_answers
    assert typical_answer_seconds(answers) == 120.0  # the newest answers, today's included
    assert typical_answer_seconds(answers, before=DAY_START) == 20.0
    assert typical_answer_seconds(answers[:45], before=DAY_START) is None  # 5: fewer than 20


def test_slow_answers_during_the_day_do_not_make_the_day_short_of_budget(index) -> None:  # type: ignore[no-untyped-def]
    morning = day_at(index, 20, [])
    assert morning.deadline is not None and not morning.deadline.short_of_budget
    later = day_at(index, 20, [120.0] * 40)  # 40 slow answers today: the median is 120 s now
    assert later.deadline == morning.deadline  # priced at 20 s all day, the final pass kept
    assert later.deadline is not None and later.deadline.seconds_per_review == 20.0


def test_the_quota_holds_as_answers_with_other_times_come_in(index) -> None:  # type: ignore[no-untyped-def]
    # the same 600 s spent today, once as 30 answers of 20 s, once as 25 quick and 5 slow
    # ones (the median of all answers: 20 s, and 11 s)
    even = day_at(index, 20, [20.0] * 30)
    uneven = day_at(index, 20, [2.0] * 25 + [110.0] * 5)
    assert even.new_limit == uneven.new_limit
    assert even.deadline == uneven.deadline
