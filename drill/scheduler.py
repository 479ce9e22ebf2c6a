"""FSRS-6 scheduling (the `fsrs` package) over the stored card state, plus `rate_card`, the one
way a rating gets into the database (used by ReviewSession and by mock rounds)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State

from drill.settings import Settings

if TYPE_CHECKING:
    from storage.db import Database

RATINGS = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
StateDict = dict[str, Any]


def utc_now() -> datetime:
    return datetime.now(UTC)


def make_scheduler(settings: Settings | None = None, *, fuzzing: bool = True) -> Scheduler:
    settings = settings or Settings()
    return Scheduler(desired_retention=settings.desired_retention, enable_fuzzing=fuzzing)


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


def next_state(
    scheduler: Scheduler, before: StateDict | None, rating: int, now: datetime
) -> StateDict:
    """The stored state after rating a card `rating` (1..4) at `now`; flags carried over."""
    if rating not in RATINGS:
        raise ValueError(f"rating must be 1..4, got {rating!r}")
    card, _log = scheduler.review_card(to_fsrs(before, now), Rating(rating), _as_utc(now))
    before = before or {}
    lapses = int(before.get("lapses") or 0)
    if rating == 1 and before.get("state") == State.Review:
        lapses += 1
    return {
        "state": int(card.state),
        "step": card.step,
        "stability": card.stability,
        "difficulty": card.difficulty,
        "due": card.due,
        "last_review": card.last_review,
        "reps": int(before.get("reps") or 0) + 1,
        "lapses": lapses,
        "suspended": bool(before.get("suspended") or False),
        "buried_until": None,  # reviewing a buried card (e.g. from a mock round) unburies it
        "introduced_at": before.get("introduced_at"),
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
    return {rating: next_state(plain, before, rating, now)["due"] - now for rating in RATINGS}


@dataclass(frozen=True)
class RatedCard:
    log_id: int
    before: StateDict | None
    after: StateDict

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
) -> RatedCard:
    """Schedule and record one rating; committed to SQLite when this returns. Mock rounds call
    it with Again (1) or Hard (2) to feed weak cards back into review."""
    moment = _as_utc(now or utc_now())
    scheduler = scheduler or make_scheduler(settings)
    recorded = db.record_review(
        card_id,
        deck_id,
        rating,
        moment,
        duration_ms,
        content_hash,
        lambda before: next_state(scheduler, before, rating, moment),
    )
    return RatedCard(recorded.log_id, recorded.before, recorded.after)
