"""FSRS-6 scheduling (the `fsrs` package) over the stored card state, plus `rate_card`, the one
way a rating gets into the database (used by ReviewSession and by mock rounds)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.review.ratings import RATING_NAMES
from drill.settings import Settings
from drill.times import utc_now
from storage.schema_names import StateDict

if TYPE_CHECKING:
    from storage.db import Database


def make_scheduler(settings: Settings | None = None, *, fuzzing: bool = True) -> Scheduler:
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


def to_fsrs(state: StateDict | None, now: datetime) -> FsrsCard:
    """The fsrs card for a stored state; a never-reviewed card is new (Learning, step 0)."""
    if state is None or state.get("state") is None:
        return FsrsCard(card_id=0, due=_as_utc(now))
    return FsrsCard(
        card_id=0,
        state=State(state["state"]),
        step=state.get("step"),
        stability=state.get("stability"),
        difficulty=state.get("difficulty"),
        due=_as_utc(state["due"]),
        last_review=_as_utc(state["last_review"]) if state.get("last_review") else None,
    )


def is_leech_lapse(lapses: int, threshold: int) -> bool:
    """Whether the lapse that brought a card to `lapses` makes it a leech (again): at the
    threshold and every half threshold after it, as Anki does. 0 turns leeches off."""
    if threshold <= 0 or lapses < threshold:
        return False
    return (lapses - threshold) % max(1, threshold // 2) == 0


def next_state(
    scheduler: Scheduler,
    before: StateDict | None,
    rating: int,
    now: datetime,
    settings: Settings | None = None,
) -> StateDict:
    """The stored state after rating a card `rating` (1..4) at `now`; flags carried over. A
    lapse that reaches the leech threshold sets `leech` (and `suspended` with leech_action
    "suspend"): in the rating's own transaction, so undoing the rating undoes both."""
    settings = settings or Settings()
    if rating not in RATING_NAMES:
        raise ValueError(f"rating must be 1..4, got {rating!r}")
    card, _log = scheduler.review_card(to_fsrs(before, now), Rating(rating), _as_utc(now))
    before = before or {}
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
        "due": card.due,
        "last_review": card.last_review,
        "reps": int(before.get("reps") or 0) + 1,
        "lapses": lapses,
        "suspended": suspended,
        "buried_until": None,  # reviewing a buried card (e.g. from a mock round) unburies it
        "introduced_at": before.get("introduced_at"),
        "leech": leech,
    }


def preview_intervals(
    scheduler: Scheduler, before: StateDict | None, now: datetime
) -> dict[int, timedelta]:
    """Rating -> interval it would give (from the unfuzzed scheduler: fuzz is a small jitter)."""
    plain = Scheduler(
        parameters=scheduler.parameters,
        desired_retention=scheduler.desired_retention,
        learning_steps=scheduler.learning_steps,
        relearning_steps=scheduler.relearning_steps,
        maximum_interval=scheduler.maximum_interval,
        enable_fuzzing=False,
    )
    return {rating: next_state(plain, before, rating, now)["due"] - now for rating in RATING_NAMES}


@dataclass(frozen=True)
class RatedCard:
    log_id: int
    before: StateDict | None
    after: StateDict
    leech_hit: bool = False  # this rating made the card a leech (again)

    @property
    def due(self) -> datetime:
        return self.after["due"]


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
        schedule or (lambda before: next_state(scheduler, before, rating, moment, settings)),
    )
    lapsed = int(recorded.after.get("lapses") or 0) > int(
        (recorded.before or {}).get("lapses") or 0
    )
    hit = lapsed and is_leech_lapse(int(recorded.after["lapses"]), settings.leech_threshold)
    return RatedCard(recorded.log_id, recorded.before, recorded.after, hit)
