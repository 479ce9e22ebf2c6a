"""Simulated learners studying the bundled cards toward an interview date, under plain FSRS or
under the interview plan: what benchmarks/interview_plan.py measures.

Both policies are the product's own code, not a re-implementation: each learner day the queue
is what the app's queue shows (drill.review.queue.review_day and queue_for over the stored
schedules, read as the session reads them), worked through as drill.review.session does
(a learning card comes back when due, or early when nothing else is left), and every rating
is scheduled by drill.review.scheduler.next_state with the default Settings (FSRS-6 defaults,
retention 0.9, 20 new cards a day, fuzz on; plain FSRS may take another retention or
new-card limit: Scenario.retention, Scenario.new_per_day). The plan adds the review layer's
deadline overlay (drill.review.deadline: planned schedules, the new-card quota and the role's
order); the stored FSRS state is never changed by it, exactly as in the app.

The learner (drill.plan.learner) holds each card's true memory, evolving by FSRS-6 with the
learner's own parameters; recall is drawn from it; the scheduler only sees ratings. A learner
studies once a day at 09:00 local time (days starting at 04:00, as the app keeps them; the
benchmark runs in UTC) and stops for the day when the
minutes spent reach the budget (`stop_at_budget`), or works through all the app shows (to
measure how far over the budget the queue goes). Recall on the date is the mean true
retrievability of every card at 09:00 on the interview day, a card never introduced counting 0.

Why fsrs-rs's simulator (fsrs_rs_python.simulate) is a cross-check and not the engine: it
schedules with the same parameters the learner remembers by (no model mismatch), treats the
deck as interchangeable cards (no decks, tags or role order), takes one learn limit and one
cost budget for every day, and has no hook for a per-day queue: it cannot express pacing, the
cap before the date or the final pass. `fsrs_rs_baseline` runs plain FSRS on a deck of the same
size and budget there, to set beside this module's plain-FSRS figure.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache

from drill.decks.index import DeckIndex, DeckOutline
from drill.decks.roles import RoleTable, load_roles
from drill.plan.learner import (
    FIRST_RATING_ODDS,
    PARAMETER_SETS,
    SUCCESS_RATING_ODDS,
    Learner,
    Memory,
    remember,
    retrievability,
)
from drill.review.deadline import deadline_for, row_from_state
from drill.review.pacing import coverage
from drill.review.queue import QueueEntry, is_due, planned_review_day, queue_for
from drill.review.scheduler import make_scheduler, next_state
from drill.settings import Settings
from drill.times import start_of
from storage.schema_names import StateDict
from storage.snapshot import (
    RECENT_ANSWERS,
    PlanRow,
    ScheduleRow,
    Snapshot,
    typical_answer_seconds,
)

POLICIES = ("fsrs", "plan")
START_DAY = date(2025, 3, 3)  # day 0 of every run (the plan is made that morning)
DAY_START_HOUR = 4
STUDY_HOUR = 9  # the learner studies once a day from 09:00; recall is measured at 09:00 too
SESSIONS_A_DAY = 4  # the learner starts another session while the budget has time left
DEFAULT_ROLE = "training-infra"


@dataclass(frozen=True)
class SimCards:
    """The cards studied: the deck outline (deck order) and each card's tags."""

    index: DeckIndex
    outline: list[DeckOutline]
    tags: Mapping[str, tuple[str, ...]]

    @property
    def card_ids(self) -> list[str]:
        return [card_id for deck in self.outline for card_id in deck.card_ids]


def cards_of(index: DeckIndex) -> SimCards:
    outline = index.outline()
    tags: dict[str, tuple[str, ...]] = {}
    for deck in outline:
        for card_id in deck.card_ids:
            record = index.card_record(card_id)
            tags[card_id] = record.tags if record is not None else ()
    return SimCards(index, outline, tags)


def bundled_cards() -> SimCards:
    """The bundled decks only (never the user's), read as first paint reads them: the deck
    cache, or a validating load when the cache is stale."""
    import decks
    from drill.decks.index import load_index, real_path

    index = load_index(include_bundled=True)
    if index is None:
        from drill.decks.loader import load_decks

        index = load_decks(include_bundled=True).index
    assert index is not None
    bundled = {real_path(path) for path in decks.bundled_deck_paths()}
    return cards_of(DeckIndex.of([e for e in index.entries if real_path(e.path) in bundled]))


@dataclass(frozen=True)
class Scenario:
    policy: str  # "fsrs": plain FSRS at the settings' retention; "plan": the interview plan
    days: int  # the interview is this many learner days after day 0
    minutes: int  # the daily budget
    params: str = "default"  # the learner's true parameters: a key of PARAMETER_SETS
    seed: int = 0
    stop_at_budget: bool = True
    role: str = DEFAULT_ROLE
    target: float = 0.90
    # plain FSRS's settings (policy "fsrs"): the desired retention and the new-card limit a day
    # (the benchmark's fair comparisons: a higher retention, or no limit so the budget is spent)
    retention: float = 0.9
    new_per_day: int = 20


@dataclass(frozen=True)
class DayLog:
    reviews: int  # ratings given, learning steps included
    new: int  # cards introduced
    seconds: float  # time spent answering
    left: int  # cards the app still showed when the learner stopped (0: finished)


@dataclass(frozen=True)
class RunResult:
    scenario: Scenario
    recall: float  # mean true retrievability on the date, never-introduced cards 0
    per_area: Mapping[str, float]
    never_introduced: int
    days: list[DayLog] = field(default_factory=list)

    @property
    def reviews_per_day(self) -> list[int]:
        return [d.reviews for d in self.days]

    @property
    def minutes_per_day(self) -> list[float]:
        return [d.seconds / 60 for d in self.days]

    @property
    def worst_over_budget(self) -> float:
        """The largest share by which a day's minutes exceeded the budget (0: none did)."""
        return max((m / self.scenario.minutes - 1 for m in self.minutes_per_day), default=0.0)


def moment(day: int, hour: int = STUDY_HOUR) -> datetime:
    return start_of(START_DAY + timedelta(days=day), hour)


def days_since_start(at: datetime) -> float:
    return (at - moment(0, 0)).total_seconds() / 86400


class _Run:
    """One learner under one policy: the stored states (what the app knows), the true memory
    (what the learner knows), and the review log's answer times."""

    def __init__(self, scenario: Scenario, cards: SimCards, areas: Mapping[str, Sequence[str]]):
        if scenario.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {scenario.policy!r}")
        self.scenario = scenario
        self.cards = cards
        self.areas = areas
        self.settings = Settings()
        if scenario.policy == "fsrs":
            self.settings = Settings(
                desired_retention=scenario.retention, new_cards_per_day=scenario.new_per_day
            )
        self.scheduler = make_scheduler(self.settings)
        self.learner = Learner.make(PARAMETER_SETS[scenario.params], scenario.seed, cards.card_ids)
        self.deck_of = {cid: deck.deck_id for deck in cards.outline for cid in deck.card_ids}
        self.states: dict[str, StateDict | None] = dict.fromkeys(cards.card_ids)
        self.memory: dict[str, Memory | None] = dict.fromkeys(cards.card_ids)
        self.answers: list[tuple[datetime, float]] = []  # (answered at, seconds), as logged
        self.plan = PlanRow(
            interview_day=START_DAY + timedelta(days=scenario.days),
            role=scenario.role,
            minutes_per_day=scenario.minutes,
            target_recall=scenario.target,
            created_at=moment(0, DAY_START_HOUR),
        )

    def snapshot(self) -> Snapshot:
        rows = {
            cid: row
            for cid, state in self.states.items()
            if state is not None and (row := row_from_state(cid, self.deck_of[cid], state))
        }
        plan = self.plan if self.scenario.policy == "plan" else None
        answers = tuple(reversed(self.answers[-RECENT_ANSWERS:]))  # newest first, as storage's
        # storage's rule for the typical answer time; the plan prices each day by the answers
        # before the day's start (Snapshot.typical_answer_before), as in the app
        typical = typical_answer_seconds(answers)
        return Snapshot(rows, plan=plan, typical_answer_s=typical, recent_answers=answers)

    def queue(self, now: datetime) -> tuple[list[QueueEntry], Mapping[str, ScheduleRow]]:
        """What the app's queue shows at `now` (drill.review.queue.planned_review_day and
        queue_for, as first paint and the session build it), and the schedules it was built
        from (the planned ones under the plan)."""
        snapshot = self.snapshot()
        day = planned_review_day(now, self.settings, snapshot, self.cards.index, _roles())
        entries = queue_for(self.cards.outline, snapshot.schedules, now, day)
        return entries, day.planned(snapshot.schedules, now)

    def run(self) -> RunResult:
        logs = [self.study_day(day) for day in range(self.scenario.days)]
        return self.result(logs)

    def study_day(self, day: int) -> DayLog:
        """The day's study from 09:00: sessions as drill.review.session runs them; when one
        ends with time left in the budget, the learner goes back to the home screen and starts
        another while it shows something to do (at most SESSIONS_A_DAY)."""
        now = moment(day)
        budget = self.scenario.minutes * 60
        total = DayLog(0, 0, 0.0, 0)
        for _ in range(SESSIONS_A_DAY):
            if self.scenario.stop_at_budget and total.seconds >= budget:
                break
            log, now = self.session(day, now, budget - total.seconds)
            total = DayLog(total.reviews + log.reviews, total.new + log.new,
                           total.seconds + log.seconds, log.left)  # fmt: skip
            if log.reviews == 0:
                break
        return total

    def session(self, day: int, now: datetime, budget: float) -> tuple[DayLog, datetime]:
        """One session from `now`, as drill.review.session runs it, until the queue is done or
        `budget` seconds are spent (stop_at_budget). The log and when the session ended."""
        entries, schedules = self.queue(now)
        next_start = moment(day + 1, DAY_START_HOUR)
        learning: list[tuple[datetime, int, QueueEntry]] = []
        queue: deque[QueueEntry] = deque()
        for entry in entries:
            row = schedules.get(entry.card_id)
            if row is not None and row.due is not None and not is_due(row, now, next_start):
                learning.append((row.due, len(learning), entry))
            else:
                queue.append(entry)
        learning.sort(key=lambda item: (item[0], item[1]))
        seconds = 0.0
        reviews = new = 0
        ahead = timedelta(minutes=self.settings.learn_ahead_minutes)
        seq = len(learning)
        while queue or learning:
            if self.scenario.stop_at_budget and seconds >= budget:
                break
            if learning and (learning[0][0] <= now or not queue):
                entry = learning.pop(0)[2]
            else:
                entry = queue.popleft()
            first = self.states[entry.card_id] is None
            spent = self.review(entry.card_id, now, first)
            seconds += spent
            reviews += 1
            new += first
            now += timedelta(seconds=spent)
            after = self.states[entry.card_id]
            assert after is not None
            if not after.get("suspended") and after["due"] <= now + ahead:
                seq += 1
                learning.append((after["due"], seq, entry))
                learning.sort(key=lambda item: (item[0], item[1]))
        return DayLog(reviews, new, seconds, len(queue) + len(learning)), now

    def review(self, card_id: str, now: datetime, first: bool) -> float:
        """The learner answers `card_id` at `now`; the app schedules the rating. Seconds spent."""
        at = days_since_start(now)
        memory = self.memory[card_id]
        rating = self.learner.rating(memory, at)
        self.memory[card_id] = remember(memory, rating, at, self.learner.params)
        before = self.states[card_id]
        after = next_state(self.scheduler, before, rating, now, self.settings, card_id=card_id)
        if after.get("introduced_at") is None:  # as storage records it
            after["introduced_at"] = now.astimezone(UTC)
        self.states[card_id] = after
        spent = self.learner.answer_seconds(card_id, first)
        self.answers.append((now.astimezone(UTC), spent))
        return spent

    def result(self, logs: list[DayLog]) -> RunResult:
        at = days_since_start(moment(self.scenario.days))
        params = self.learner.params
        recall = {cid: retrievability(m, at, params) for cid, m in self.memory.items()}
        per_area: dict[str, float] = {}
        for area, tags in self.areas.items():
            wanted = set(tags)
            values = [r for cid, r in recall.items() if wanted & set(self.cards.tags[cid])]
            if values:
                per_area[area] = statistics.fmean(values)
        never = sum(1 for state in self.states.values() if state is None)
        return RunResult(self.scenario, statistics.fmean(recall.values()), per_area, never, logs)


@cache
def _roles() -> RoleTable:
    return load_roles()


def coverable(days: int, minutes: int, cards: SimCards, role: str = DEFAULT_ROLE) -> bool:
    """Whether the plan's own coverage estimate (drill.review.pacing.coverage, at the
    default answer time) says the budget introduces every card, on day 0 of a plan `days`
    out: where the benchmark holds the plan to recall >= 0.90."""
    plan = PlanRow(START_DAY + timedelta(days=days), role, minutes, 0.9, moment(0))
    deadline = deadline_for(plan, cards.index, Settings(), None, _roles())
    assert deadline is not None, f"no role {role!r} in the role table"
    return coverage(deadline, START_DAY, cards.card_ids).covered


def areas_of_role_table() -> Mapping[str, tuple[str, ...]]:
    """The topic areas (area -> tags) of the bundled role table."""
    return dict(_roles().areas)


def simulate(
    scenario: Scenario,
    cards: SimCards | None = None,
    areas: Mapping[str, Sequence[str]] | None = None,
) -> RunResult:
    """One learner under `scenario`, from day 0 to the morning of the interview."""
    cards = cards or bundled_cards()
    areas = areas_of_role_table() if areas is None else areas
    return _Run(scenario, cards, areas).run()


def fsrs_rs_baseline(cards: int, days: int, minutes: int, seed: int, seconds: float) -> float:
    """Plain FSRS (default parameters, retention 0.9, 20 new a day, the same rating odds, every
    answer `seconds` long) in fsrs-rs's own simulator: mean retrievability on day `days`
    (morning), cards never introduced counting 0."""
    import fsrs_rs_python as rs

    config = rs.default_simulator_config()
    config.deck_size = cards
    config.learn_span = days
    config.max_cost_perday = minutes * 60.0
    config.learn_limit = Settings().new_cards_per_day
    config.first_rating_prob = list(FIRST_RATING_ODDS)
    config.review_rating_prob = list(SUCCESS_RATING_ODDS)
    config.state_rating_costs = [[seconds] * 4 for _ in range(3)]
    result = rs.simulate(list(PARAMETER_SETS["default"]), 0.9, config, seed=seed)
    return sum(c.retention_on(days) for c in result.cards if c.stability > 0) / cards
