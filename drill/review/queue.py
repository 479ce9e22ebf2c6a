"""Which cards to review now: due cards first (oldest due first), then new cards up to the daily
limit. Pure functions over plain data (deck outlines + stored schedules): stdlib only, so the
first paint can build the queue without importing the scheduler or the ORM.

`review_day` is the one place that works out the learner's day (when it started, when the next
starts) and what is left of its new-card limit; the queue, the due counts and `drill due` use it.
The learner's day itself (`learner_date`, `day_start`, `next_day_start`) lives in drill.times
and is re-exported here. A review card is due by day, as in Anki: from the start of its due day
on; learning and relearning cards are due by time.

With an interview plan in force (drill.review.deadline), the day carries its Deadline: the
queue and the due counts then read the planned schedules (ReviewDay.planned), the day's new
cards are the plan's quota (worked out at the day's start) in the role's value order. One rule
for every count: home, `drill due`, the stats and the session all go through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from drill.decks.index import DeckIndex, DeckOutline
from drill.review.balance import brought_forward, spare_reviews
from drill.review.deadline import REVIEW_STATE as REVIEW_STATE  # fsrs State.Review
from drill.review.deadline import Deadline, active_deadline, deadline_for, planned_schedules
from drill.review.pacing import day_quota, fitted_to_budget, order_new
from drill.settings import Settings
from drill.times import day_start, next_day_start
from drill.times import learner_date as learner_date  # re-exported: the fit and stats use it
from storage.snapshot import ScheduleRow, Snapshot
from storage.snapshot import damaged_notice as damaged_notice  # re-exported: home says it

if TYPE_CHECKING:
    from drill.decks.roles import RoleTable


@dataclass(frozen=True, slots=True)
class QueueEntry:
    card_id: str
    deck_id: str
    is_new: bool


@dataclass(frozen=True, slots=True)
class ReviewDay:
    """The learner's current day at some moment, and its new-card budget."""

    start: datetime  # day_start(): the last local day_start_hour:00 at or before the moment
    next_start: datetime  # next_day_start(): when "tomorrow" begins (bury lasts until then)
    new_limit: int  # Settings.new_cards_per_day across all decks, or the plan's quota
    introduced_today: int  # cards first reviewed from `start` up to the moment (never later)
    learn_ahead: timedelta = timedelta(0)  # cards due within this window are offered now too
    deadline: Deadline | None = None  # the interview plan, when it schedules this day
    day_start_hour: int = 4  # Settings.day_start_hour (the planned days start then)
    # review cards brought forward to today with the budget left once the day's planned work
    # is done (drill.review.balance.spare_reviews)
    spare: frozenset[str] = frozenset()

    def planned(
        self, schedules: Mapping[str, ScheduleRow], now: datetime
    ) -> Mapping[str, ScheduleRow]:
        """The schedules as the plan moves them (drill.review.deadline.planned_schedules, then
        the spare reviews due today); the stored ones without a plan."""
        planned = planned_schedules(schedules, self.deadline, now, self.day_start_hour)
        return brought_forward(planned, self.spare, self.start.astimezone(UTC))


def review_day(
    now: datetime, settings: Settings, snapshot: Snapshot, deadline: Deadline | None = None
) -> ReviewDay:
    """The day containing `now` (local day_start_hour) and how many new cards it introduced.
    With a `deadline` that is active today, the new-card limit is the plan's quota for the day
    (drill.review.deadline.day_quota), in place of Settings.new_cards_per_day."""
    hour = settings.day_start_hour
    start = day_start(now, hour)
    limit = settings.new_cards_per_day
    introduced_today = snapshot.introduced_since(start, until=now)
    spare: frozenset[str] = frozenset()
    deadline = active_deadline(deadline, learner_date(now, hour))
    if deadline is not None:
        deadline = fitted_to_budget(deadline, snapshot.schedules, now, hour)
        planned = planned_schedules(snapshot.schedules, deadline, now, hour)
        spent = snapshot.spent_seconds(start, now, deadline.seconds_per_review)
        limit = day_quota(planned, deadline, now, hour, spent_seconds=spent)
        new_left = new_remaining(limit, introduced_today)
        spare = spare_reviews(planned, deadline, now, hour, spent, new_left)
    return ReviewDay(
        start=start,
        next_start=next_day_start(now, hour),
        new_limit=limit,
        introduced_today=introduced_today,
        learn_ahead=timedelta(minutes=settings.learn_ahead_minutes),
        deadline=deadline,
        day_start_hour=hour,
        spare=spare,
    )


def planned_review_day(
    now: datetime,
    settings: Settings,
    snapshot: Snapshot,
    index: DeckIndex | None,
    roles: RoleTable | None = None,
) -> ReviewDay:
    """review_day with the interview plan in force (Snapshot.plan) over the decks of `index`:
    what first paint, the session, `drill due` and the stats use. Without a plan (or without
    an index) it is review_day. `roles`: the bundled role table when None. The day is priced
    by the typical answer time at its start (Snapshot.typical_answer_before), so the answers
    given during the day never change its quota or its short-of-budget decision."""
    deadline = None
    if snapshot.plan is not None and index is not None:
        answer_s = snapshot.typical_answer_before(day_start(now, settings.day_start_hour))
        deadline = deadline_for(snapshot.plan, index, settings, answer_s, roles)
    return review_day(now, settings, snapshot, deadline)


def is_available(row: ScheduleRow | None, now: datetime) -> bool:
    """Not suspended and not buried past `now`."""
    if row is None:
        return True
    if row.suspended:
        return False
    return row.buried_until is None or row.buried_until <= now


def is_new(row: ScheduleRow | None) -> bool:
    return row is None or row.state is None


def is_due(row: ScheduleRow, now: datetime, day_end: datetime | None = None) -> bool:
    """Whether a scheduled card is due at `now` (see due_at)."""
    return due_at(row.state, row.due, now, day_end)


def due_at(
    state: int | None, due: datetime | None, now: datetime, day_end: datetime | None = None
) -> bool:
    """Whether a card in fsrs `state` stored as due at `due` is due at `now`: the one rule the
    queue, custom study and the browser's `is:due` share. A review card is due by day: from the
    start of its due learner day, so anything due before `day_end` (when the next day starts)
    is due now; a learning or relearning card is due at its time. Without `day_end`, by time
    for all."""
    if due is None:
        return False
    if state == REVIEW_STATE and day_end is not None:
        return due < day_end
    return due <= now


def new_remaining(new_limit: int, introduced_today: int) -> int:
    return max(0, new_limit - introduced_today)


def build_queue(
    outline: Sequence[DeckOutline],
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    *,
    new_limit: int,
    introduced_today: int,
    deck_id: str | None = None,
    learn_ahead: timedelta = timedelta(0),
    day_end: datetime | None = None,
    deadline: Deadline | None = None,
) -> list[QueueEntry]:
    """Due cards (is_due: review cards due before `day_end`, the others due <= now), oldest
    due first; then new cards in deck order (with a `deadline`: the plan's order), up to
    `new_limit - introduced_today`; then cards due within `learn_ahead` (a learning step
    a few minutes away), soonest first: the same window a session uses for a card it just
    rated, so reopening offers them too. Suspended and buried-until-later cards are skipped."""
    due: list[tuple[datetime, int, QueueEntry]] = []
    ahead: list[tuple[datetime, int, QueueEntry]] = []
    fresh: list[QueueEntry] = []
    order = 0
    for deck in outline:
        if deck_id is not None and deck.deck_id != deck_id:
            continue
        for card_id in deck.card_ids:
            row = schedules.get(card_id)
            if not is_available(row, now):
                continue
            if is_new(row):
                fresh.append(QueueEntry(card_id, deck.deck_id, True))
            elif row is not None and row.due is not None and is_due(row, now, day_end):
                due.append((row.due, order, QueueEntry(card_id, deck.deck_id, False)))
                order += 1
            elif row is not None and row.due is not None and row.due <= now + learn_ahead:
                ahead.append((row.due, order, QueueEntry(card_id, deck.deck_id, False)))
                order += 1
    due.sort(key=lambda item: (item[0], item[1]))
    ahead.sort(key=lambda item: (item[0], item[1]))
    if deadline is not None:
        by_id = {entry.card_id: entry for entry in fresh}
        fresh = [by_id[card_id] for card_id in order_new(list(by_id), deadline)]
    fresh = fresh[: new_remaining(new_limit, introduced_today)]
    return [e for _, _, e in due] + fresh + [e for _, _, e in ahead]


def queue_for(
    outline: Sequence[DeckOutline],
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    day: ReviewDay,
    deck_id: str | None = None,
) -> list[QueueEntry]:
    """The review queue at `now` within `day`'s new-card budget (first paint and sessions),
    over the planned schedules when the day has a plan (`schedules`: the stored ones)."""
    return build_queue(
        outline,
        day.planned(schedules, now),
        now,
        new_limit=day.new_limit,
        introduced_today=day.introduced_today,
        deck_id=deck_id,
        learn_ahead=day.learn_ahead,
        day_end=day.next_start,
        deadline=day.deadline,
    )
