"""The interview plan's load balance (drill.review.deadline calls it last in
planned_schedules): no learner day before the date is shown more reviews than the budget
holds.

Each learner day from today to the eve of the date has room for `review_capacity` reviews
(PLANNED_SHARE of the budget at REVIEW_ANSWERS answers a review: new cards get what reviews
leave, so new cards stop first). Today's room is less the cards already reviewed today. The
review cards the plan has due on those days (the final pass and the peak on the day already
applied) are placed by `balanced_days`:

- **Review ahead onto lighter days:** a day with more reviews than room gives the overflow to
  the days before it, back to today (the latest day with room wins: a review as close to its
  due as the budget allows), within the final window only (`earliest_day`: the final pass
  and the peak on the day are reviews in the window; overflow there cannot wait, it would
  pass the date).
- **A cap on today:** when today is still over, the cards due by today (or overdue) are
  shown weakest first (lowest predicted recall on the date: recall_on) up to the room; the
  rest wait for tomorrow (on the eve: for the date, when plain FSRS takes over). Cards pulled
  from later days that do not fit stay on their own day.

A pure function of the rows and the day, like the rest of the overlay, so the queue, the
counts and the rating previews (planned_due) see the same days. While today goes on, a
reviewed card leaves the pool and takes one place of today's room, so the cards shown today
stay the same ones.

**Spare minutes** (`spare_reviews`, applied by drill.review.queue.ReviewDay.planned, after
all of the above): once the day's planned work is done (no planned review left today, the
day's new cards introduced) and the minutes spent today leave budget over, the review cards
weakest on the date (lowest recall_on) are brought forward to today, as many as the budget
left holds, and only those whose recall on the date is below the target + SPARE_MARGIN and,
far from the date (SPARE_FAR_DAYS), that FSRS does not review again before it (the learner is
not asked for reviews that gain little). Only cards not reviewed today, so a rated
card never moves: previews stay exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, datetime, timedelta, tzinfo

from drill.review.deadline import (
    REVIEW_STATE,
    DayStarts,
    Deadline,
    introduced_before,
    recall_on,
    stable_hash,
)
from drill.review.pacing import PLANNED_SHARE, REVIEW_ANSWERS, SHORT_REVIEW_SHARE
from drill.times import learner_date
from storage.snapshot import ScheduleRow

# Spare minutes go only to cards whose predicted recall on the date is below the target plus
# this margin: a card already well above it gains little from another review, and the learner
# should not be asked for much more than needed (measured in benchmarks/RESULTS-plan.md).
SPARE_MARGIN = 0.05
# More than this many learner days before the date, spare minutes go only to cards with no
# planned review left before the date: one that FSRS reviews again before the date gains
# little from a review now (at 30 days the fill without this asked for about twice plain
# FSRS's minutes for under a point of recall on the date).
SPARE_FAR_DAYS = 14


def review_capacity(deadline: Deadline) -> int:
    """Reviews a day's budget holds: PLANNED_SHARE of it at REVIEW_ANSWERS answers each;
    SHORT_REVIEW_SHARE while the budget cannot introduce every card (short_of_budget: new
    cards first, the weakest reviews fill the rest and the others wait a day)."""
    per_review = REVIEW_ANSWERS * deadline.seconds_per_review
    share = SHORT_REVIEW_SHARE if deadline.short_of_budget else PLANNED_SHARE
    return max(1, math.floor(share * deadline.budget_seconds / per_review))


def _in_scope(row: ScheduleRow) -> bool:
    return (
        row.state == REVIEW_STATE
        and not row.suspended
        and not row.damaged
        and row.due is not None
        and row.last_review is not None
    )


def _learning_due(row: ScheduleRow, today_start: datetime, tomorrow_start: datetime) -> bool:
    """A learning or relearning card from before today that is due today."""
    return (
        row.state not in (None, REVIEW_STATE)
        and not row.suspended
        and row.due is not None
        and row.due < tomorrow_start
        and introduced_before(row, today_start)
    )


def earliest_day(planned_day: date, deadline: Deadline, today: date) -> date:
    """The earliest learner day the balance may pull a review card planned for `planned_day`
    to: in the final window, the window's first day (or today); before it, its own day (a
    full day before the window waits a day instead: pulling it ahead would crowd out the day's
    new cards, and FSRS gains little from a review well before its due)."""
    first, _last = deadline.final_window()
    return max(today, first) if planned_day >= first else planned_day


def balanced_days(
    planned: Mapping[str, ScheduleRow],
    deadline: Deadline,
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
    starts: DayStarts | None = None,
) -> dict[str, date]:
    """Card id -> the learner day the balance moves it to, for the review cards it moves
    (pulled ahead, or waiting for a later day); `planned`: the schedules with the final pass
    and the peak on the day applied."""
    today = learner_date(now, day_start_hour, tz)
    if not deadline.active(today):
        return {}
    starts = starts or DayStarts(day_start_hour, tz)
    eve = deadline.interview_day - timedelta(days=1)
    end = starts(eve + timedelta(days=1))
    today_start = starts(today)
    capacity = review_capacity(deadline)
    tomorrow_start = starts(today + timedelta(days=1))
    reviewed_today = 0  # and learning cards due today: shown whatever the balance does
    day_of: dict[str, date] = {}  # planned day (today for overdue) of each card in scope
    earliest: dict[str, date] = {}
    weakness: dict[str, tuple[float, int]] = {}
    for card_id, row in planned.items():
        seen_today = row.last_review is not None and row.last_review >= today_start
        if seen_today:
            reviewed_today += introduced_before(row, today_start)
        elif _learning_due(row, today_start, tomorrow_start):
            reviewed_today += 1
            continue
        if not _in_scope(row) or row.due >= end:  # type: ignore[operator]
            continue
        soonest = today + timedelta(days=1) if seen_today else today  # never twice a day
        day = max(soonest, learner_date(row.due, day_start_hour, tz))  # type: ignore[arg-type]
        day_of[card_id] = day
        earliest[card_id] = max(soonest, earliest_day(day, deadline, today))
        last_day = learner_date(row.last_review, day_start_hour, tz)  # type: ignore[arg-type]
        recall = recall_on(row.stability or 0.0, last_day, deadline.interview_day, deadline.decay)
        weakness[card_id] = (recall, stable_hash(card_id))
    by_day: dict[date, list[str]] = {}
    for card_id, day in day_of.items():
        by_day.setdefault(day, []).append(card_id)
    moved: dict[str, date] = {}
    pool: list[str] = []
    day = eve
    while day > today:  # review ahead: overflow goes to the latest earlier day with room
        pool.extend(by_day.get(day, ()))
        # the cards that cannot go earlier keep their places first, then the weakest
        pool.sort(key=lambda cid: (-earliest[cid].toordinal(), -day_of[cid].toordinal(),
                                   weakness[cid]))  # fmt: skip
        for card_id in pool[:capacity]:
            if day_of[card_id] != day:
                moved[card_id] = day
        pool = [cid for cid in pool[capacity:] if earliest[cid] < day]
        day -= timedelta(days=1)
    room = max(0, capacity - reviewed_today)
    due_today = sorted(by_day.get(today, ()), key=lambda cid: weakness[cid])
    for card_id in due_today[room:]:  # the cap on today: the rest wait a day
        moved[card_id] = today + timedelta(days=1)
    room = max(0, room - len(due_today))
    pool.sort(key=lambda cid: (-day_of[cid].toordinal(), weakness[cid]))
    for card_id in pool[:room]:
        moved[card_id] = today
    return moved


def balanced(
    planned: Mapping[str, ScheduleRow],
    deadline: Deadline,
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
    starts: DayStarts | None = None,
) -> Mapping[str, ScheduleRow]:
    """`planned` with each review card the balance moves due at the start of its new day."""
    starts = starts or DayStarts(day_start_hour, tz)
    moved = balanced_days(planned, deadline, now, day_start_hour, tz, starts)
    if not moved:
        return planned
    out = dict(planned)
    for card_id, day in moved.items():
        out[card_id] = replace(out[card_id], due=starts(day))
    return out


def spare_reviews(
    planned: Mapping[str, ScheduleRow],
    deadline: Deadline,
    now: datetime,
    day_start_hour: int,
    spent_seconds: float,
    new_left: int,
    tz: tzinfo | None = None,
) -> frozenset[str]:
    """Review cards to bring forward to today with the budget left over (`planned`: the
    balanced schedules; `spent_seconds`: today's measured answer time; `new_left`: new cards
    still to introduce today). Nothing while the day's planned work is not done: a review
    card due today and not yet reviewed today, or a new card left. Otherwise PLANNED_SHARE of
    the budget, less the minutes spent and the learning steps still due today, at
    REVIEW_ANSWERS answers a review, goes to the cards not reviewed today that are weakest on
    the date (lowest recall_on; ties by stable_hash), among those below the target +
    SPARE_MARGIN on the date and, more than SPARE_FAR_DAYS before the date, with no planned
    review left before it. A card reviewed today is never chosen
    (never twice a day), so a rating's preview is never moved by this."""
    today = learner_date(now, day_start_hour, tz)
    if not deadline.active(today) or new_left > 0:
        return frozenset()
    starts = DayStarts(day_start_hour, tz)
    today_start, end = starts(today), starts(today + timedelta(days=1))
    far = (deadline.interview_day - today).days > SPARE_FAR_DAYS
    date_start = starts(deadline.interview_day)
    steps_left = 0  # learning and relearning answers still due today
    candidates: list[tuple[float, int, str]] = []
    for card_id, row in planned.items():
        if row.state is None or row.suspended or row.damaged or row.due is None:
            continue
        if row.buried_until is not None and row.buried_until > now:
            continue
        reviewed_today = row.last_review is not None and row.last_review >= today_start
        if row.due < end:
            if row.state != REVIEW_STATE:
                steps_left += 1
            elif not reviewed_today:
                return frozenset()  # the day's planned reviews come first
            continue
        if row.state != REVIEW_STATE or reviewed_today or row.last_review is None:
            continue
        if far and row.due < date_start:
            continue  # far from the date, a card with a review planned before it waits for it
        last_day = learner_date(row.last_review, day_start_hour, tz)
        recall = recall_on(row.stability or 0.0, last_day, deadline.interview_day, deadline.decay)
        if recall >= deadline.target_recall + SPARE_MARGIN:
            continue  # already well above the target on the date: not worth the learner's time
        candidates.append((recall, stable_hash(card_id), card_id))
    per_review = REVIEW_ANSWERS * deadline.seconds_per_review
    left = PLANNED_SHARE * deadline.budget_seconds - spent_seconds
    left -= steps_left * deadline.seconds_per_review
    count = math.floor(left / per_review) if left > 0 else 0
    candidates.sort()
    return frozenset(card_id for _recall, _hash, card_id in candidates[:count])


def brought_forward(
    planned: Mapping[str, ScheduleRow],
    spare: frozenset[str],
    today_start: datetime,
) -> Mapping[str, ScheduleRow]:
    """`planned` with each card of `spare` (spare_reviews) due at `today_start`, while it is
    still a review card not reviewed today (once rated, it keeps the due its rating gave)."""
    if not spare:
        return planned
    out = dict(planned)
    for card_id in spare:
        row = out.get(card_id)
        if row is None or row.state != REVIEW_STATE or row.last_review is None:
            continue
        if row.last_review >= today_start:
            continue
        out[card_id] = replace(row, due=today_start)
    return out
