"""The interview plan's pacing (drill.review.deadline holds the plan and its planned
schedule): how many new cards a day and in which order, and whether the budget introduces
every card in time (coverage). Pure functions of the plan, the stored schedules and the day;
stdlib only, as first paint builds the queue with them.

Tuned with the simulation (benchmarks/interview_plan.py; figures in RESULTS-plan.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, tzinfo

from drill.review.deadline import (
    REVIEW_STATE,
    UNMEASURED_SECONDS_PER_REVIEW,
    Deadline,
    introduced_before,
    planned_schedules,
)
from drill.times import learner_date, start_of
from storage.snapshot import ScheduleRow

# What a due review costs, in answers: one, and the relearning steps after a lapse (about one
# review in ten lapses and takes two or three more answers).
REVIEW_ANSWERS = 1.25
# coverage(): a card introduced `age` days ago is reviewed about 1 / (age + REVIEW_RATE_OFFSET)
# times a day (intervals grow: about 2, 8, 25 days for Good answers), so a card costs about 2.8
# reviews over its first 30 days, as the simulation saw; cards introduced before the estimate
# starts are taken to be KNOWN_CARD_AGE days old. An estimate, not a promise.
REVIEW_RATE_OFFSET = 2.0
KNOWN_CARD_AGE = 7
# The share of the daily budget the plan fills with work it can foresee (the day's due reviews
# and the new cards' first answers): lapses, relearning steps and slow first views take the
# rest. The simulation (benchmarks/interview_plan.py) measured days up to 30 % over a 45-minute
# budget when the plan filled all of it.
PLANNED_SHARE = 0.85
# New cards may run ahead of the even pace, up to this factor, while the budget has room: a
# card introduced earlier has more spaced reviews before the date, and the early days (few
# reviews yet) have time to spare. The simulation measured +2 to +8 points of recall on the
# date over the even pace at 10-14 days and 45 minutes.
AHEAD_OF_PACE = 2.0
# Short of cards (no final pass): new cards may fill nearly all of what is left of the budget.
# The quota counts the minutes already spent today (day_quota's spent_seconds), so a day whose
# answers ran slower than priced stops early and one that ran faster gets more; at 0.92 (before
# spent minutes were counted) the plan left 8-15 % of a 30-minute budget unspent, at 1.0 the
# last new cards' learning steps took days 12-14 % over a 30-minute budget.
SHORT_SHARE = 0.95
# Short of cards before drill has measured an answer, the share is this: the first session's
# learning steps are not known yet (the simulation measured the first day +11 % over a
# 30-minute budget at 1.0, +3 % at 0.8).
UNMEASURED_SHARE = 0.8
# Short of cards, reviews may fill this share of the day (balance.review_capacity): the weakest
# on the date first, the rest wait a day. A card never introduced counts 0 on the date, one
# introduced counts about 0.9, a review adds a few points: plain FSRS, whose learner stops at
# the budget with reviews left, introduced more cards and beat the plan by 6-17 points on
# 30-minute budgets while the plan gave reviews the whole day (benchmarks/RESULTS-plan.md).
SHORT_REVIEW_SHARE = 0.25


# --- pacing ----------------------------------------------------------------------------------
def pace(deadline: Deadline, today: date, unintroduced: int) -> int:
    """New cards a day so that `unintroduced` cards are all introduced by the last
    introduction day (all of them at once when that day has passed)."""
    days_left = (deadline.last_introduction_day() - today).days + 1
    return math.ceil(unintroduced / max(1, days_left)) if unintroduced > 0 else 0


def budget_new_cards(deadline: Deadline, review_seconds_today: float) -> int:
    """New cards the day's budget has room for after `review_seconds_today` of reviews."""
    share = PLANNED_SHARE if deadline.final_pass_days else SHORT_SHARE
    if not deadline.measured and not deadline.final_pass_days:
        share = UNMEASURED_SHARE
    left = share * deadline.budget_seconds - review_seconds_today
    return max(0, math.floor(left / deadline.new_card_seconds)) if left > 0 else 0


def new_quota(
    deadline: Deadline, today: date, unintroduced: int, review_seconds_today: float
) -> int:
    """Today's new-card count by the plan: as many as the budget has room for after today's
    reviews, up to AHEAD_OF_PACE times the even pace (every card introduced before the final
    window), and never fewer than the pace when the budget has room for it. Pass the state at
    the start of the day (cards introduced today counted as not yet introduced; the reviews
    due at the start of the day) so the quota holds all day: see day_quota. 0 once the plan
    is over."""
    if not deadline.active(today):
        return 0
    budget = budget_new_cards(deadline, review_seconds_today)
    ahead = math.ceil(AHEAD_OF_PACE * pace(deadline, today, unintroduced))
    return min(unintroduced, ahead, budget)


def _reviewed_or_due(row: ScheduleRow, start: datetime, end: datetime) -> bool:
    """Part of the day's review load: reviewed since `start`, or (not suspended) due before
    `end`."""
    if row.last_review is not None and row.last_review >= start:
        return True
    return not row.suspended and row.due is not None and row.due < end


def day_quota(
    planned: Mapping[str, ScheduleRow],
    deadline: Deadline,
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
    spent_seconds: float | None = None,
) -> int:
    """new_quota for the learner day containing `now`, from the state at the day's start:
    the cards of the decks not introduced before the day started (suspended new cards left
    out), and the review load of the day (cards introduced earlier that were reviewed today or
    are due by the day's end in the `planned` schedules, suspended ones unless reviewed today).
    Before drill has measured an answer the day's new cards are priced at
    UNMEASURED_SECONDS_PER_REVIEW an answer.

    With `spent_seconds` (the minutes already spent today, from the review log's measured
    answer times: Snapshot.spent_seconds) the budget is the real one: what is left of it after
    the time spent and the reviews still due today (learning steps of cards in learning one
    answer each) goes to new cards, on top of those introduced today; so new cards stop when
    the day's real minutes reach the budget, and a day cheaper than priced gets more. Without
    it (None) the quota is the estimate from the day's start, which ratings do not change."""
    if not deadline.measured:
        slow = max(deadline.seconds_per_review, UNMEASURED_SECONDS_PER_REVIEW)
        deadline = replace(deadline, seconds_per_review=slow)
    today = learner_date(now, day_start_hour, tz)
    start = start_of(today, day_start_hour, tz)
    end = start_of(today + timedelta(days=1), day_start_hour, tz)
    unintroduced = load = introduced_today = 0
    answers_left = 0.0  # spent_seconds: the reviews still to answer today
    for card_id in deadline.card_values:
        row = planned.get(card_id)
        if row is None or row.damaged:
            unintroduced += row is None
            continue
        if not introduced_before(row, start):
            unintroduced += not (row.suspended and row.state is None)
            introduced_today += row.state is not None
            answers_left += _learning_due(row, end)
        else:
            load += _reviewed_or_due(row, start, end)
            answers_left += _still_due(row, start, end)
    seconds = load * REVIEW_ANSWERS * deadline.seconds_per_review
    if spent_seconds is None:
        return new_quota(deadline, today, unintroduced, seconds)
    if not deadline.active(today):
        return 0
    left = spent_seconds + answers_left * deadline.seconds_per_review
    more = budget_new_cards(deadline, left)
    ahead = math.ceil(AHEAD_OF_PACE * pace(deadline, today, unintroduced))
    return min(unintroduced, ahead, introduced_today + more)


def _still_due(row: ScheduleRow, start: datetime, end: datetime) -> float:
    """Answers a card introduced before today still costs today: a review due by the day's end
    and not yet reviewed today REVIEW_ANSWERS; one reviewed today and back in (re)learning
    before the day's end one answer."""
    if row.suspended or row.due is None or row.due >= end:
        return 0.0
    if row.last_review is not None and row.last_review >= start:
        return 1.0 if row.state != REVIEW_STATE else 0.0
    return REVIEW_ANSWERS


def _learning_due(row: ScheduleRow, end: datetime) -> float:
    """A card introduced today and still in learning before the day's end: one more answer."""
    if row.suspended or row.due is None or row.due >= end or row.state == REVIEW_STATE:
        return 0.0
    return 1.0 if row.state is not None else 0.0


def order_new(card_ids: Sequence[str], deadline: Deadline | None) -> list[str]:
    """New cards in the order the plan introduces them: role value, highest first; equal
    values keep the given (deck) order. Without a plan: the given order."""
    if deadline is None:
        return list(card_ids)
    values = deadline.card_values
    return sorted(card_ids, key=lambda cid: -values.get(cid, 0.0))


def fitted_to_budget(
    deadline: Deadline,
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    day_start_hour: int,
    tz: tzinfo | None = None,
) -> Deadline:
    """`deadline` as it schedules the learner day containing `now`: when the budget cannot
    introduce every card before the final window (coverage, from the state at the day's
    start), the final pass is given up and new cards are introduced up to the eve of the date,
    highest value first: a card never seen counts nothing on the day, and one introduced on the
    eve is recalled about nine times in ten, so a new card is worth more than a last review
    (the simulation measured 3-9 points lost to the final pass on 30-minute budgets)."""
    today = learner_date(now, day_start_hour, tz)
    if not deadline.active(today) or deadline.final_pass_days == 0:
        return deadline
    start = start_of(today, day_start_hour, tz)
    unintroduced: list[str] = []
    introduced = 0
    for card_id in deadline.card_values:
        row = schedules.get(card_id)
        if row is not None and row.damaged:
            continue
        if row is not None and introduced_before(row, start):
            introduced += 1
        elif row is None or not (row.suspended and row.state is None):
            unintroduced.append(card_id)
    if not coverage(deadline, today, unintroduced, introduced).covered:
        return replace(deadline, final_pass_days=0, short_of_budget=True)
    if unintroduced and today > deadline.last_introduction_day():
        # past the pace's end the estimate knows nothing of the final pass's own load: the
        # cards left keep the pass only when today's quota under it introduces them all
        planned = planned_schedules(schedules, deadline, now, day_start_hour, tz)
        if day_quota(planned, deadline, now, day_start_hour, tz) < len(unintroduced):
            return replace(deadline, final_pass_days=0, short_of_budget=True)
    return deadline


# --- coverage --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Coverage:
    """Whether the budget introduces every card before the final window (an estimate)."""

    cards: int  # cards not yet introduced
    introduced: int  # of them, how many the budget introduces by the last introduction day
    last_introduction_day: date
    left_out_decks: tuple[str, ...]  # decks with cards left out, lowest value first
    final_pass: bool = True  # False: short of cards, the plan gives the final pass up

    @property
    def left_out(self) -> int:
        return self.cards - self.introduced

    @property
    def covered(self) -> bool:
        return self.left_out == 0


def coverage(
    deadline: Deadline,
    today: date,
    unintroduced: Sequence[str],
    introduced: int = 0,
) -> Coverage:
    """Whether the daily budget introduces all of `unintroduced` (card ids) by the last
    introduction day, starting with `today` (the plan's order: the cards left out are the
    lowest in value).

    An estimate that assumes: each day's new cards follow new_quota; each card costs
    seconds_per_review an answer, NEW_CARD_ANSWERS answers on its first day; and a card
    introduced `age` days before is reviewed 1 / (age + REVIEW_RATE_OFFSET) times a day (the
    `introduced` ones before today taken to be KNOWN_CARD_AGE days old). Real reviews depend
    on the answers: lapses cost more, easy cards less."""
    last = deadline.last_introduction_day()
    cohorts: list[tuple[int, int]] = [(-KNOWN_CARD_AGE, introduced)]  # (day index, cards)
    done = 0
    day = today
    while day <= max(last, today) and done < len(unintroduced):  # past it: all at once
        now = (day - today).days
        reviews = sum(n / (now - born + REVIEW_RATE_OFFSET) for born, n in cohorts)
        count = new_quota(
            deadline, day, len(unintroduced) - done, reviews * deadline.seconds_per_review
        )
        count = min(count, len(unintroduced) - done)
        done += count
        cohorts.append((now, count))
        day += timedelta(days=1)
    left = order_new(unintroduced, deadline)[done:]
    decks: list[str] = []
    for card_id in reversed(left):
        deck = deadline.card_decks.get(card_id)
        if deck is not None and deck not in decks:
            decks.append(deck)
    return Coverage(len(unintroduced), done, last, tuple(decks), deadline.final_pass_days > 0)


def plan_coverage(
    deadline: Deadline, today: date, unintroduced: Sequence[str], introduced: int = 0
) -> Coverage:
    """coverage as the plan acts on it (fitted_to_budget): with the final pass when the budget
    introduces every card before it; otherwise without it, new cards up to the eve."""
    cover = coverage(deadline, today, unintroduced, introduced)
    if cover.covered or deadline.final_pass_days == 0:
        return cover
    return coverage(replace(deadline, final_pass_days=0), today, unintroduced, introduced)
