"""The one "today" queue on the home screen (issue 33), UI-free: what to do today, in order, each
item with the minutes it takes and how far it got.

    items = today_queue(first, now, settings, plan=plan, typical_answer_s=s, db=db)

1. reviews   the cards due now, as `drill due` counts them (drill.review.due: one rule for the
             home screen, `drill due` and stats; this module never counts due cards itself);
             done: cards introduced before today and reviewed today.
2. new       the day's new cards (the plan's quota and order, or the normal daily limit: the
             same count); done: cards introduced today.
3. lab       one lab to predict, where predictions are weakest: the card (with a lab and a
             prediction) whose predictions were least often right, a card never predicted first;
             ties go to the role's higher-value card, then deck order. Done once a prediction
             was made today (then the item names that card).
4. exercise  one unsolved exercise, preferring one linked from the role's highest-value decks;
             done once one was solved today.
5. mock      the coding round, on the role's planned days only (Role.mock_days_before, e.g. 7,
             4 and 2 days before the date); done once a round was started today.

With a plan in force the lab and exercise items count against its daily budget: after the
minutes already answered today (FirstPaint.spent_today_s) and the review and new-card items, an
item that no longer fits says "over today's budget" (the plan's new-card quota already stops
at the budget; the mock round, on its planned days, is not counted).

Minutes come from measured answer times (Snapshot.typical_answer_s: the median of the newest
timed reviews), DEFAULT_ANSWER_S without any; a new card takes NEW_CARD_ANSWERS answers on its
first day (the plan's budget counts it so: drill.review.deadline). The lab, exercise and mock
items need the database (run log, exercise progress, mock rounds): without it (`db=None`, the
first paint before the services load) they are left out. Module imports stay light (the first
paint imports this).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from drill.review.deadline import DEFAULT_SECONDS_PER_REVIEW, NEW_CARD_ANSWERS
from drill.times import day_start, learner_date
from storage.snapshot import PlanRow as PlanRow  # re-exported: the screens type the plan with it

if TYPE_CHECKING:
    from drill.decks.index import CardRecord, DeckIndex
    from drill.decks.roles import Role, RoleTable
    from drill.review.deadline import Deadline
    from drill.review.due import FirstPaint
    from drill.settings import Settings
    from storage.db import Database
    from storage.snapshot import ScheduleRow

REVIEWS, NEW, LAB, EXERCISE, MOCK = "reviews", "new", "lab", "exercise", "mock"
KINDS = (REVIEWS, NEW, LAB, EXERCISE, MOCK)  # the order the queue is walked in

DEFAULT_ANSWER_S = DEFAULT_SECONDS_PER_REVIEW  # an answer, before drill has measured any
LAB_MINUTES = 5.0  # predict, run, read the observation
EXERCISE_MINUTES = 30.0  # one exercise, start to a passing check
RUN_LOG_WINDOW = 5000  # newest lab runs read for the prediction record
OVER_BUDGET = "over today's budget"


@dataclass(frozen=True)
class TodayItem:
    kind: str  # one of KINDS
    label: str  # one line (deck text inside is the caller's to show as text)
    minutes: float  # what is left of it today
    done: int
    total: int
    target: str = ""  # the card (lab), exercise or round to open; "" for the review session
    over_budget: bool = False  # its minutes do not fit what is left of the plan's budget

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def progress(self) -> str:
        return f"{self.done}/{self.total}"


def today_queue(
    first: FirstPaint,
    now: datetime,
    settings: Settings,
    *,
    plan: PlanRow | None = None,
    typical_answer_s: float | None = None,
    db: Database | None = None,
    roles: RoleTable | None = None,
) -> list[TodayItem]:
    """Today's items in walking order (KINDS). `first` is the light read (its totals are the
    due and new counts); `db` the app's database (None: no lab, exercise or round record yet)."""
    start = day_start(now, settings.day_start_hour)
    seconds = typical_answer_s or DEFAULT_ANSWER_S
    role = _role_of(plan, roles)
    due = first.totals["due"]
    due_ids = [entry.card_id for entry in first.queue if not entry.is_new][:due]
    measured = db.review.answer_seconds(due_ids) if db is not None else {}
    review_seconds = sum(measured.get(card_id, seconds) for card_id in due_ids)
    review_seconds += (due - len(due_ids)) * seconds  # (the queue holds them all; to be safe)
    items = [
        _reviews(first.schedules, due, start, now, review_seconds),
        _new(first.schedules, first.totals["new"], start, now, seconds, first.deadline),
    ]
    if db is not None:
        value = _card_values(first.index, role)
        cards = _cards_in_deck_order(first.index)
        lab = _lab(cards, value, _lab_runs(db), start)
        exercise = _exercise(cards, value, db, start)
        extras = [item for item in (lab, exercise) if item is not None]
        items += _against_budget(extras, plan, first.spent_today_s, items)
    if plan is not None and role is not None:
        before = days_left(plan, now, settings.day_start_hour)
        if before in role.mock_days_before:
            items.append(_mock(before, _rounds_since(db, start) if db is not None else 0))
    return items


def _against_budget(
    extras: list[TodayItem], plan: PlanRow | None, spent_s: float, cards: list[TodayItem]
) -> list[TodayItem]:
    """The lab and exercise items counted against the plan's daily budget: after the minutes
    already answered today and the review and new-card items, in walking order, an item whose
    minutes no longer fit says so in its label (still there to open). Without a plan: as
    they are."""
    if plan is None:
        return extras
    left = plan.minutes_per_day - spent_s / 60 - sum(item.minutes for item in cards)
    counted: list[TodayItem] = []
    for item in extras:
        if item.finished or item.minutes <= left + 1e-9:
            left -= item.minutes
            counted.append(item)
        else:
            label = f"{item.label} · {OVER_BUDGET}"
            counted.append(replace(item, label=label, over_budget=True))
    return counted


def next_item(items: Sequence[TodayItem]) -> TodayItem | None:
    """The first item not finished, in walking order: what `enter` opens next."""
    return next((item for item in items if not item.finished), None)


def days_left(plan: PlanRow, now: datetime, day_start_hour: int) -> int:
    """Learner days from today to the interview day (0 on the day itself)."""
    return (plan.interview_day - learner_date(now, day_start_hour)).days


# --- reviews and new cards: the due counts' numbers, progress from the schedules ---------------
def _reviews(
    schedules: Mapping[str, ScheduleRow], due: int, start: datetime, now: datetime, total: float
) -> TodayItem:
    """The reviews item: `due` cards taking `total` seconds (each card's measured answer time,
    the typical one for a card without any)."""
    done = sum(
        1
        for row in schedules.values()
        if row.last_review is not None
        and start <= row.last_review <= now
        and row.introduced_at is not None
        and row.introduced_at < start
    )
    label = "Reviews due" if due else "Reviews · nothing due now"
    return TodayItem(REVIEWS, label, total / 60, done, done + due)


def _new(
    schedules: Mapping[str, ScheduleRow],
    new: int,
    start: datetime,
    now: datetime,
    seconds: float,
    deadline: Deadline | None,
) -> TodayItem:
    from storage.snapshot import Snapshot

    done = Snapshot(schedules=dict(schedules)).introduced_since(start, until=now)
    label = "New cards by the plan" if deadline is not None else "New cards"
    minutes = new * NEW_CARD_ANSWERS * seconds / 60  # a new card's first day: a few answers
    return TodayItem(NEW, label, minutes, done, done + new)


# --- one lab to predict ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Prediction:
    card_id: str
    right: bool | None
    started_at: datetime


def _lab_runs(db: Database) -> list[_Prediction]:
    from drill.runs.log import LAB, RunLog

    runs = RunLog(db).runs(kinds=[LAB], limit=RUN_LOG_WINDOW)
    return [
        _Prediction(r.card_id, r.prediction_right, r.started_at)
        for r in runs
        if r.card_id is not None and r.predicted is not None
    ]


def _lab(
    cards: Sequence[CardRecord],
    value: Mapping[str, float],
    predictions: Iterable[_Prediction],
    start: datetime,
) -> TodayItem | None:
    linked = [c for c in cards if c.lab is not None and c.predict is not None]
    if not linked:
        return None
    by_id = {c.id: c for c in linked}
    record: dict[str, tuple[int, int]] = {}  # card -> (right, judged)
    predicted_today: list[_Prediction] = []
    for p in predictions:
        if p.card_id not in by_id:
            continue
        if p.started_at >= start:
            predicted_today.append(p)
        if p.right is not None:
            right, judged = record.get(p.card_id, (0, 0))
            record[p.card_id] = (right + p.right, judged + 1)
    if predicted_today:  # today's prediction made: the item is that card, done
        card = by_id[max(predicted_today, key=lambda p: p.started_at).card_id]
        return TodayItem(LAB, _lab_label(card), 0.0, 1, 1, card.id)
    order = {c.id: i for i, c in enumerate(linked)}

    def weakness(card: CardRecord) -> tuple[float, float, int]:
        right, judged = record.get(card.id, (0, 0))
        share = right / judged if judged else -1.0  # never predicted: weakest
        return (share, -value.get(card.id, 1.0), order[card.id])

    card = min(linked, key=weakness)
    return TodayItem(LAB, _lab_label(card), LAB_MINUTES, 0, 1, card.id)


def _lab_label(card: CardRecord) -> str:
    lab = card.lab or {}
    return f"Predict lab {lab.get('run', '?')} · card {card.id}"


# --- one unsolved exercise ------------------------------------------------------------------
def _exercise(
    cards: Sequence[CardRecord], value: Mapping[str, float], db: Database, start: datetime
) -> TodayItem | None:
    from drill.exercises.progress import ProgressStore
    from trainer_lab.exercises.catalogue import EXERCISES

    progress = ProgressStore(db).all()
    solved_today = [
        (p.solved_at, name)
        for name, p in progress.items()
        if name in EXERCISES and p.solved_at is not None and p.solved_at >= start
    ]
    if solved_today:
        name = max(solved_today)[1]
        return TodayItem(EXERCISE, _exercise_label(name), 0.0, 1, 1, name)
    best: dict[str, tuple[float, int]] = {}  # exercise -> (highest linking card value, position)
    for position, card in enumerate(cards):
        if card.exercise in EXERCISES:
            found = best.get(card.exercise, (0.0, position))
            best[card.exercise] = (max(found[0], value.get(card.id, 1.0)), found[1])
    unsolved = [
        (-best.get(name, (0.0, 0))[0], best.get(name, (0.0, len(cards)))[1], i, name)
        for i, name in enumerate(EXERCISES)
        if name not in progress or progress[name].solved_at is None
    ]
    if not unsolved:
        return None
    name = min(unsolved)[3]
    return TodayItem(EXERCISE, _exercise_label(name), EXERCISE_MINUTES, 0, 1, name)


def _exercise_label(name: str) -> str:
    return f"Exercise {name}"


# --- the mock round on its planned days -----------------------------------------------------
def mock_minutes() -> float:
    """The coding round's length (its phases' minutes: 55)."""
    from drill.mock.coding.session import CODING_PHASES

    return float(sum(phase.minutes for phase in CODING_PHASES))


def _mock(before: int, rounds_today: int) -> TodayItem:
    """The round planned `before` days ahead of the interview."""
    done = 1 if rounds_today else 0
    label = f"Mock round · {before} days before the interview"
    return TodayItem(MOCK, label, 0.0 if done else mock_minutes(), done, 1, "coding")


def _rounds_since(db: Database, start: datetime) -> int:
    """Mock rounds begun since `start`: text rounds saved, coding rounds graded."""
    from drill.runs.log import CODING, RunLog

    text = sum(1 for row in db.mocks.history(50) if row.started_at >= start)
    coding = sum(1 for r in RunLog(db).runs(kinds=[CODING], limit=50) if r.started_at >= start)
    return text + coding


# --- the role ---------------------------------------------------------------------------------
def _role_of(plan: PlanRow | None, roles: RoleTable | None) -> Role | None:
    """The plan's role (None without a plan, or for a role the table no longer has)."""
    if plan is None:
        return None
    if roles is None:
        from drill.decks.roles import load_roles

        roles = load_roles()
    return roles.roles.get(plan.role)


def _cards_in_deck_order(index: DeckIndex) -> list[CardRecord]:
    found = (index.card_record(card_id) for d in index.outline() for card_id in d.card_ids)
    return [record for record in found if record is not None]


def _card_values(index: DeckIndex, role: Role | None) -> dict[str, float]:
    """card id -> the role's value of it (all 1.0 without a role: deck order decides)."""
    values: dict[str, float] = {}
    for deck in index.outline():
        for card_id in deck.card_ids:
            record = index.card_record(card_id)
            tags = record.tags if record is not None else ()
            values[card_id] = role.card_value(deck.deck_id, tags) if role is not None else 1.0
    return values
