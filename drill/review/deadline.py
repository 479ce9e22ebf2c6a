"""Scheduling toward an interview date on top of FSRS-6 (the interview plan, `drill plan`).

A read-time overlay: the stored FSRS state is never changed by the plan. Every rule works on
learner days (drill.times: the local day that starts at `day_start_hour`, DST-safe) and is a
pure function of the stored schedules, the plan and the day, so the queue, the due counts,
`drill due`, the stats and the rating previews all see the same planned schedule.

The rules, while the plan is active (today before the interview day):

- **Pacing** (drill.review.pacing: `new_quota`, `order_new`): new cards come in the role's
  value order (deck order among equals), paced so that every card is introduced by the day
  before the final window (up to twice that pace while the budget has room), and capped by
  the daily budget left after the minutes already spent today (the review log's measured
  answer times) and the reviews still due; short of budget, the final pass gives way to new
  cards and reviews get a quarter of the day (`fitted_to_budget`, balance.review_capacity).
- **Final pass** (`planned_schedules`): every review card last reviewed before the final window
  (FINAL_PASS_DAYS days, longer when the budget needs it: final_pass_length) is due no later
  than its day in the window: the cards are ranked by role value (then a
  stable hash of the id) and cut into equal runs, one a day, the most valuable last (closest
  to the date); never later than its own FSRS due.
- **Peak on the day**: a review card due on or after the date whose predicted recall on the date
  (`recall_on`) is below the target is due on the day before the date instead, unless it was
  last reviewed on that day (no loop within a day).
- **Load balance** (drill.review.balance, applied last by `planned_schedules`): no day shows
  more reviews than its budget holds; today's overflow waits a day (weakest on the date
  first), and overflow in the final window comes earlier within the window.
- **Spare minutes** (balance.spare_reviews, applied by drill.review.queue.ReviewDay.planned):
  once the day's planned work is done and budget is left after the minutes spent, the review
  cards weakest on the date (recall_on) are brought forward to today, within the budget, while
  their recall on the date is below the target + balance.SPARE_MARGIN.

After the date, or without a plan, the schedule is exactly the stored FSRS one. Learning and
relearning cards (due by time) are never moved. Stdlib only: first paint builds the queue.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from drill.times import learner_date, start_of
from storage.schema_names import StateDict
from storage.snapshot import PlanRow, ScheduleRow

if TYPE_CHECKING:
    from drill.decks.index import DeckIndex
    from drill.decks.roles import RoleTable
    from drill.settings import Settings

REVIEW_STATE = 2  # fsrs State.Review (as drill.review.queue; imported there from here)
FINAL_PASS_DAYS = 3  # the final pass: the last 3 learner days before the date (at least)
MAX_FINAL_PASS_DAYS = 7
# The final pass may take this share of a day's budget: the window is made longer (up to
# MAX_FINAL_PASS_DAYS) when every card once in FINAL_PASS_DAYS would not fit (final_pass_length;
# the simulation, benchmarks/interview_plan.py, measured the first window day 26-37 % over a
# 30-minute budget with 3 days for the bundled cards).
FINAL_PASS_SHARE = 0.6
# FSRS-6 w[20] of fsrs.scheduler.DEFAULT_PARAMETERS (pinned equal by a test): the decay of the
# forgetting curve when the settings hold no personal parameters. Importing fsrs here would put
# it on the first-paint path.
DEFAULT_DECAY = 0.1542
DEFAULT_SECONDS_PER_REVIEW = 20.0  # one answer, before drill has measured any
# The day's new-card quota before drill has measured any answer (day_quota): the slow end of
# typical answer times, so a first day does not overrun the budget (the simulation measured the
# first day 11-24 % over a 30-minute budget at 20 s, with learners of 15-25 s an answer).
UNMEASURED_SECONDS_PER_REVIEW = 25.0
# What a new card costs on its first day, in answers: the first sight and the learning steps
# that follow (Again/Good steps of 1 and 10 minutes), about three on average.
NEW_CARD_ANSWERS = 3.0


@dataclass(frozen=True)
class Deadline:
    """The interview plan as the scheduler needs it (see deadline_for)."""

    interview_day: date
    target_recall: float
    minutes_per_day: int
    card_values: Mapping[str, float]  # card id -> role value (higher is introduced first)
    decay: float  # FSRS-6 w[20] of the settings' parameters
    seconds_per_review: float = DEFAULT_SECONDS_PER_REVIEW  # measured, or the default
    final_pass_days: int = FINAL_PASS_DAYS
    card_decks: Mapping[str, str] = field(default_factory=dict)  # card id -> deck id
    measured: bool = True  # seconds_per_review is measured (False: the default)
    # the budget cannot introduce every card (drill.review.pacing.fitted_to_budget): the final
    # pass is given up and reviews get a smaller share of the day (balance.review_capacity)
    short_of_budget: bool = False

    def active(self, today: date) -> bool:
        """Whether the plan schedules on learner day `today`: before the interview day."""
        return today < self.interview_day

    def final_window(self) -> tuple[date, date]:
        """(first, last) learner days of the final pass: the `final_pass_days` days before the
        date. With final_pass_days 0 the window is empty (first > last)."""
        return _window(self.interview_day, self.final_pass_days)

    def last_introduction_day(self) -> date:
        """The last learner day on which the pace introduces new cards: the day before the
        final window."""
        return self.final_window()[0] - timedelta(days=1)

    @property
    def budget_seconds(self) -> float:
        return self.minutes_per_day * 60.0

    @property
    def new_card_seconds(self) -> float:
        """What one new card costs on its first day (NEW_CARD_ANSWERS answers)."""
        return NEW_CARD_ANSWERS * self.seconds_per_review


@functools.lru_cache(maxsize=64)
def _window(interview_day: date, final_pass_days: int) -> tuple[date, date]:
    last = interview_day - timedelta(days=1)
    return interview_day - timedelta(days=final_pass_days), last


def final_pass_length(cards: int, minutes_per_day: int, seconds_per_review: float) -> int:
    """Learner days of the final pass for `cards` cards: FINAL_PASS_DAYS, or more (up to
    MAX_FINAL_PASS_DAYS) so that one review of each takes at most FINAL_PASS_SHARE of a day's
    budget."""
    share = FINAL_PASS_SHARE * max(1, minutes_per_day) * 60.0
    needed = math.ceil(cards * seconds_per_review / share)
    return max(FINAL_PASS_DAYS, min(MAX_FINAL_PASS_DAYS, needed))


def deadline_for(
    plan: PlanRow | None,
    index: DeckIndex,
    settings: Settings,
    typical_answer_s: float | None = None,
    roles: RoleTable | None = None,
) -> Deadline | None:
    """The Deadline for the plan in force over the decks of `index`; None without a plan, or
    when the plan's role is not in the role table (then scheduling is plain FSRS)."""
    if plan is None:
        return None
    if roles is None:
        from drill.decks.roles import load_roles

        roles = load_roles()
    if plan.role not in roles.roles:
        return None
    role = roles.roles[plan.role]
    values: dict[str, float] = {}
    decks: dict[str, str] = {}
    for deck in index.outline():
        for card_id in deck.card_ids:
            record = index.card_record(card_id)
            tags = record.tags if record is not None else ()
            values[card_id] = role.card_value(deck.deck_id, tags)
            decks[card_id] = deck.deck_id
    seconds = typical_answer_s or DEFAULT_SECONDS_PER_REVIEW
    return Deadline(
        interview_day=plan.interview_day,
        target_recall=plan.target_recall,
        minutes_per_day=plan.minutes_per_day,
        card_values=values,
        decay=decay_of(settings),
        seconds_per_review=seconds,
        final_pass_days=final_pass_length(len(values), plan.minutes_per_day, seconds),
        card_decks=decks,
        measured=typical_answer_s is not None,
    )


def decay_of(settings: Settings) -> float:
    """FSRS-6's decay (w[20]) of the settings' parameters, or of fsrs's defaults."""
    parameters = settings.fsrs_parameters
    return parameters[20] if parameters else DEFAULT_DECAY


def active_deadline(deadline: Deadline | None, today: date) -> Deadline | None:
    """`deadline` when it schedules on `today`, else None (no plan, or on/after the date)."""
    return deadline if deadline is not None and deadline.active(today) else None


# --- memory ----------------------------------------------------------------------------------
def recall_on(stability: float, last_review_day: date, day: date, decay: float) -> float:
    """FSRS-6's predicted recall on learner day `day` of a card last reviewed on
    `last_review_day` with `stability` (days): the power forgetting curve
    R(t) = (1 + factor * t / S) ** -decay, factor = 0.9 ** (-1 / decay) - 1, t in whole learner
    days (0 on the day of the review: recall 1.0), as fsrs computes retrievability."""
    elapsed = max(0, (day - last_review_day).days)
    factor = 0.9 ** (-1 / decay) - 1
    return (1 + factor * elapsed / max(stability, 1e-9)) ** -decay


@functools.lru_cache(maxsize=65536)
def stable_hash(card_id: str) -> int:
    """A hash of the card id that is the same in every process (Python's hash() is salted)."""
    return int.from_bytes(hashlib.blake2b(card_id.encode(), digest_size=8).digest(), "big")


# --- the planned schedule --------------------------------------------------------------------
def introduced_before(row: ScheduleRow, moment: datetime) -> bool:
    """Whether the card was first reviewed before `moment` (new cards never)."""
    first = row.introduced_at or row.last_review
    return row.state is not None and (first is None or first < moment)


def final_pass_days(
    schedules: Mapping[str, ScheduleRow], deadline: Deadline, day_start_hour: int,
    tz: tzinfo | None = None,
) -> dict[str, date]:  # fmt: skip
    """Card id -> its day in the final window, for every card introduced before the window
    starts. The cards are ordered by role value, then by stable_hash, and cut into
    `final_pass_days` runs of equal size (within one card), the most valuable last. The set is
    fixed once the window has begun (a card introduced in the window is not in it), so a card's
    day does not move while the window runs."""
    first, last = deadline.final_window()
    days = (last - first).days + 1
    if days <= 0:
        return {}
    window_start = start_of(first, day_start_hour, tz)
    members = [cid for cid, row in schedules.items() if introduced_before(row, window_start)]
    members.sort(key=lambda cid: (deadline.card_values.get(cid, 0.0), stable_hash(cid), cid))
    count = len(members)
    return {cid: first + timedelta(days=rank * days // count) for rank, cid in
            enumerate(members)}  # fmt: skip


class DayStarts:
    """When each learner day starts (aware UTC), worked out once per day: the plan compares
    every stored time with the starts of a few days (the window, the eve, the date), so
    comparing times is as good as converting each to its learner day, and much cheaper."""

    def __init__(self, day_start_hour: int, tz: tzinfo | None = None) -> None:
        self.hour = day_start_hour
        self.tz = tz
        self._known: dict[date, datetime] = {}

    def __call__(self, day: date) -> datetime:
        found = self._known.get(day)
        if found is None:
            found = self._known[day] = start_of(day, self.hour, self.tz).astimezone(UTC)
        return found


def planned_due_day(
    row: ScheduleRow,
    deadline: Deadline,
    today: date,
    final_day: date | None,
    day_start_hour: int,
    tz: tzinfo | None = None,
    starts: DayStarts | None = None,
) -> date | None:
    """The learner day the plan moves review card `row` to (earlier than its FSRS due day), or
    None when the plan leaves it alone. `final_day` is its final-pass day (final_pass_days).
    `starts`: day starts already worked out (planned_schedules shares one)."""
    if not deadline.active(today) or row.state != REVIEW_STATE:
        return None
    if row.due is None or row.last_review is None:
        return None
    starts = starts or DayStarts(day_start_hour, tz)
    first, _last = deadline.final_window()
    if final_day is not None and row.last_review < starts(first):  # not seen in the window
        # moved when the final-pass day comes before the FSRS due day
        return final_day if row.due >= starts(final_day + timedelta(days=1)) else None
    eve = deadline.interview_day - timedelta(days=1)
    if row.due < starts(deadline.interview_day) or row.stability is None:
        return None  # due before the date: FSRS reviews it in time
    if row.last_review >= starts(eve):
        return None  # seen on the eve already: no second review that day
    last_day = learner_date(row.last_review, day_start_hour, tz)
    recall = recall_on(row.stability, last_day, deadline.interview_day, deadline.decay)
    return eve if recall < deadline.target_recall else None


def row_from_state(card_id: str, deck_id: str, state: StateDict) -> ScheduleRow:
    """The ScheduleRow of a stored state (a card_state row as the scheduler sees it, e.g. the
    state after a rating): what planned_schedules reads."""
    return ScheduleRow(
        card_id=card_id,
        deck_id=deck_id,
        state=state.get("state"),
        due=state.get("due"),
        suspended=bool(state.get("suspended")),
        buried_until=state.get("buried_until"),
        content_hash=state.get("content_hash"),
        introduced_at=state.get("introduced_at"),
        leech=bool(state.get("leech")),
        last_review=state.get("last_review"),
        stability=state.get("stability"),
        difficulty=state.get("difficulty"),
    )


def planned_due(
    schedules: Mapping[str, ScheduleRow],
    deadline: Deadline | None,
    card_id: str,
    deck_id: str,
    after: StateDict,
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
) -> datetime:
    """The due the card has under the plan once its state is `after` (the rest as in
    `schedules`): what a rating preview shows, so that it equals what the queue then does."""
    today = learner_date(now, day_start_hour, tz)
    row = row_from_state(card_id, deck_id, after)
    if deadline is None or not deadline.active(today) or row.state != REVIEW_STATE:
        return after["due"]
    changed = dict(schedules)
    changed[card_id] = row
    due = planned_schedules(changed, deadline, now, day_start_hour, tz)[card_id].due
    assert due is not None
    return due


def planned_schedules(
    schedules: Mapping[str, ScheduleRow],
    deadline: Deadline | None,
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
) -> Mapping[str, ScheduleRow]:
    """The stored rows with `due` replaced (by the start of the planned learner day, aware UTC)
    where the plan moves a review card: earlier for the final pass and the peak on the day,
    then the load balance (drill.review.balance: ahead onto lighter days, the rest of a full
    day a day later). The same mapping, unchanged, when there is no plan or it is not active
    at `now`."""
    today = learner_date(now, day_start_hour, tz)
    if deadline is None or not deadline.active(today):
        return schedules
    finals = final_pass_days(schedules, deadline, day_start_hour, tz)
    starts = DayStarts(day_start_hour, tz)
    planned = dict(schedules)
    for card_id, row in schedules.items():
        final_day = finals.get(card_id)
        day = planned_due_day(row, deadline, today, final_day, day_start_hour, tz, starts)
        if day is not None:
            planned[card_id] = replace(row, due=starts(day))
    from drill.review.balance import balanced  # it builds on this module

    return balanced(planned, deadline, now, day_start_hour, tz, starts)
