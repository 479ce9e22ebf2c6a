"""FSRS-6 scheduling (the `fsrs` package computes the memory state) over the stored card state,
with Anki's conventions around it: elapsed time in learner days, review cards due by day, Anki's
fuzz ranges and Hard < Good < Easy (drill.review.fuzz). Plus `rate_card`, the one way a rating
gets into the database (used by ReviewSession and by mock rounds)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.review.fuzz import fuzz_factor, fuzzed_days, round_half_up
from drill.review.ratings import RATING_NAMES
from drill.settings import Settings
from drill.times import days_between, learner_date, start_of, utc_now
from storage.schema_names import StateDict

if TYPE_CHECKING:
    from storage.db import Database


def make_scheduler(settings: Settings | None = None, *, fuzzing: bool = True) -> Scheduler:
    """The FSRS scheduler for `settings`. `fuzzing` turns drill's Anki-style fuzz on or off
    (drill.review.fuzz); the fsrs package's own fuzz is never used (its range differs)."""
    settings = settings or Settings()
    return Scheduler(
        parameters=settings.fsrs_parameters or DEFAULT_PARAMETERS,  # personal: `drill optimize`
        desired_retention=settings.desired_retention,
        enable_fuzzing=fuzzing,
    )


def _as_utc(moment: datetime) -> datetime:
    # fsrs insists on tzinfo == timezone.utc exactly
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def to_fsrs(
    state: StateDict | None, now: datetime, day_start_hour: int = 4, tz: tzinfo | None = None
) -> FsrsCard:
    """The fsrs card for a stored state at `now`; a never-reviewed card is new (Learning, step
    0). The fsrs package counts elapsed days as whole 24-hour periods since `last_review`;
    drill counts learner days (drill.times.days_between, as the fit does), so the last review
    handed to fsrs is placed exactly that many days before `now`."""
    now = _as_utc(now)
    if state is None or state.get("state") is None:
        return FsrsCard(card_id=0, due=now)
    last = state.get("last_review")
    if last:
        elapsed = max(0, days_between(_as_utc(last), now, day_start_hour, tz))
        last = now - timedelta(days=elapsed)
    return FsrsCard(
        card_id=0,
        state=State(state["state"]),
        step=state.get("step"),
        stability=state.get("stability"),
        difficulty=state.get("difficulty"),
        due=_as_utc(state["due"]),
        last_review=last or None,
    )


def is_leech_lapse(lapses: int, threshold: int) -> bool:
    """Whether the lapse that brought a card to `lapses` makes it a leech (again): at the
    threshold and every half threshold after it, as Anki does. 0 turns leeches off."""
    if threshold <= 0 or lapses < threshold:
        return False
    return (lapses - threshold) % max(1, threshold // 2) == 0


def _unfuzzed(scheduler: Scheduler) -> Scheduler:
    return Scheduler(
        parameters=scheduler.parameters,
        desired_retention=scheduler.desired_retention,
        learning_steps=scheduler.learning_steps,
        relearning_steps=scheduler.relearning_steps,
        maximum_interval=scheduler.maximum_interval,
        enable_fuzzing=False,
    )


def interval_for(scheduler: Scheduler, stability: float) -> float:
    """FSRS-6's interval in days (unrounded) at which recall falls to the desired retention."""
    decay = -scheduler.parameters[20]
    factor = 0.9 ** (1 / decay) - 1
    return stability / factor * (scheduler.desired_retention ** (1 / decay) - 1)


def _review_days(
    scheduler: Scheduler,
    card: FsrsCard,
    rating: int,
    now: datetime,
    fuzz: float | None,
) -> tuple[FsrsCard, int | None]:
    """The fsrs outcome of `rating` and, when it is a review card, its interval in learner days
    as Anki sets it: fuzzed, at least 1, and for a review card's Hard, Good and Easy strictly
    increasing (each at least one day over the one before, after fuzz)."""
    top = scheduler.maximum_interval

    def outcome(r: int) -> FsrsCard:
        return scheduler.review_card(card, Rating(r), now)[0]

    result = outcome(rating)
    if result.state != State.Review:
        return result, None

    def days(outcome_card: FsrsCard) -> float:
        return interval_for(scheduler, outcome_card.stability)

    if card.state == State.Review and rating >= 2:
        floor = 1
        for r in (2, 3, 4):
            got = fuzzed_days(fuzz, days(result if r == rating else outcome(r)), floor, top)
            if r == rating:
                return result, got
            floor = got + 1
    if card.state == State.Review:  # Again with no relearning steps: not fuzzed (Anki)
        return result, fuzzed_days(None, days(result), 1, top)
    # graduating from (re)learning: the rounded interval fuzzed; Easy over what Good would give
    floor = 1
    if rating == 4:
        good = outcome(3)
        floor = fuzzed_days(fuzz, max(1, round_half_up(days(good))), 1, top) + 1
    return result, fuzzed_days(fuzz, max(1, round_half_up(days(result))), floor, top)


def next_state(
    scheduler: Scheduler,
    before: StateDict | None,
    rating: int,
    now: datetime,
    settings: Settings | None = None,
    *,
    card_id: str = "",
    tz: tzinfo | None = None,
) -> StateDict:
    """The stored state after rating a card `rating` (1..4) at `now`; flags carried over.

    Scheduled like Anki: elapsed time in learner days; a review card is due from the start of
    its due learner day (`due` is that day's start, local `day_start_hour`:00 in `tz`), a
    learning card at its time; intervals fuzzed as Anki fuzzes them, seeded by `card_id` and
    the review (drill.review.fuzz), when the scheduler has fuzzing on. A lapse that reaches the
    leech threshold sets `leech` (and `suspended` with leech_action "suspend"): in the rating's
    own transaction, so undoing the rating undoes both."""
    settings = settings or Settings()
    if rating not in RATING_NAMES:
        raise ValueError(f"rating must be 1..4, got {rating!r}")
    moment = _as_utc(now)
    hour = settings.day_start_hour
    before = before or {}
    last = before.get("last_review")
    fuzz = (
        fuzz_factor(card_id, int(before.get("reps") or 0), _as_utc(last) if last else None)
        if scheduler.enable_fuzzing
        else None
    )
    card = to_fsrs(before or None, moment, hour, tz)
    card, days = _review_days(_unfuzzed(scheduler), card, rating, moment, fuzz)
    due = card.due
    if days is not None:
        today = learner_date(moment, hour, tz)
        due = start_of(today + timedelta(days=days), hour, tz).astimezone(UTC)
    lapses = int(before.get("lapses") or 0)
    suspended = bool(before.get("suspended") or False)
    leech = bool(before.get("leech") or False)
    if rating == 1 and before.get("state") == State.Review:
        lapses += 1
        if is_leech_lapse(lapses, settings.leech_threshold):
            leech = True
            suspended = suspended or settings.leech_action == "suspend"
    return {
        "state": int(card.state),
        "step": card.step,
        "stability": card.stability,
        "difficulty": card.difficulty,
        "due": due,
        "last_review": moment,
        "reps": int(before.get("reps") or 0) + 1,
        "lapses": lapses,
        "suspended": suspended,
        "buried_until": None,  # reviewing a buried card (e.g. from a mock round) unburies it
        "introduced_at": before.get("introduced_at"),
        "leech": leech,
    }


def preview_intervals(
    scheduler: Scheduler,
    before: StateDict | None,
    now: datetime,
    settings: Settings | None = None,
    *,
    card_id: str = "",
    tz: tzinfo | None = None,
    planned: Callable[[StateDict], datetime] | None = None,
) -> dict[int, timedelta]:
    """Rating -> the interval that rating gives: the same computation as the rating itself
    (fuzz included, so pass the same `card_id` and settings). A review card's interval is
    whole learner days (it is due from the start of that day); a learning step is its time.
    `planned` gives the due a state after the rating really has (the interview plan moves a
    review earlier: drill.review.deadline); without it, the stored FSRS due."""
    settings = settings or Settings()
    hour = settings.day_start_hour
    today = learner_date(_as_utc(now), hour, tz)
    intervals: dict[int, timedelta] = {}
    for rating in RATING_NAMES:
        after = next_state(scheduler, before, rating, now, settings, card_id=card_id, tz=tz)
        due = planned(after) if planned is not None else after["due"]
        if after["state"] == State.Review:
            intervals[rating] = timedelta(days=(learner_date(due, hour, tz) - today).days)
        else:
            intervals[rating] = due - _as_utc(now)
    return intervals


@dataclass(frozen=True)
class RatedCard:
    log_id: int
    before: StateDict | None
    after: StateDict
    leech_hit: bool = False  # this rating made the card a leech (again)

    @property
    def due(self) -> datetime:
        return self.after["due"]


def leech_notice(card_id: str, after: StateDict) -> str:
    """What to tell the user when a rating made `card_id` a leech (RatedCard.leech_hit)."""
    done = "suspended" if after.get("suspended") else "tagged leech"
    return f"Leech: {card_id} lapsed {after.get('lapses')} times, {done}"


def rate_card(
    db: Database,
    card_id: str,
    deck_id: str,
    rating: int,
    *,
    content_hash: str | None,
    now: datetime | None = None,
    duration_ms: int = 0,
    settings: Settings | None = None,
    scheduler: Scheduler | None = None,
    schedule: Callable[[StateDict | None], StateDict] | None = None,
) -> RatedCard:
    """Schedule and record one rating; committed to SQLite when this returns. Mock rounds call
    it with Again (1) or Hard (2) to feed weak cards back into review. `schedule` replaces the
    FSRS step (custom study logs a not-yet-due card's rating without moving its schedule)."""
    moment = _as_utc(now or utc_now())
    settings = settings or Settings()
    scheduler = scheduler or make_scheduler(settings)
    recorded = db.review.record_review(
        card_id,
        deck_id,
        rating,
        moment,
        duration_ms,
        content_hash,
        schedule
        or (
            lambda before: next_state(scheduler, before, rating, moment, settings, card_id=card_id)
        ),
    )
    lapsed = int(recorded.after.get("lapses") or 0) > int(
        (recorded.before or {}).get("lapses") or 0
    )
    hit = lapsed and is_leech_lapse(int(recorded.after["lapses"]), settings.leech_threshold)
    return RatedCard(recorded.log_id, recorded.before, recorded.after, hit)
