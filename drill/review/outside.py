"""Ratings from outside the review screen: an exercise solved, a lab rated from the labs list, a
mock round's feedback. One rule for all of them (`rate_from_outside`):

- a card never reviewed is not rated: it stays new, so nothing from outside review ever spends
  the day's new-card limit (nor goes past it);
- a card that is due is rated as in review (drill.review.scheduler.rate_card);
- a card that is not due yet is logged (review history, stats) with its schedule unchanged, as
  custom study treats a card studied ahead (drill.review.study).

Each call returns a `CardChange` that says what happened to the card, for the report to show
("restart-state: Good, due in 12 d", "sampler-epoch: not due, logged only", "fsdp-new: new,
not rated"). A review session rating a card that is not its current one goes through the same
rule (drill.review.session.ReviewSession.rate_card).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from drill.review.queue import REVIEW_STATE, due_at
from drill.review.ratings import RATING_NAMES
from drill.review.scheduler import RatedCard, make_scheduler, next_state, rate_card
from drill.settings import Settings
from drill.times import learner_date, next_day_start, utc_now
from storage.db import CallerError
from storage.schema_names import StateDict

if TYPE_CHECKING:
    from fsrs import Scheduler

    from storage.db import Database

RESCHEDULED = "rescheduled"  # due: rated as in review
LOGGED = "logged"  # not due: the review logged, the schedule kept
NEW = "new"  # never reviewed: not rated


@dataclass(frozen=True)
class CardChange:
    """What a rating from outside review did to one card."""

    card_id: str
    rating: int
    kind: str  # RESCHEDULED | LOGGED | NEW
    due: datetime | None = None  # RESCHEDULED: when the card is due now
    rated_at: datetime | None = None
    due_state: int | None = None  # RESCHEDULED: the fsrs state it is in now
    rated: RatedCard | None = field(default=None, compare=False)  # the row written, if any
    day_start_hour: int = 4  # the learner's day (Settings.day_start_hour), for "due in N d"

    @property
    def changed(self) -> bool:
        """Whether a review was written (rescheduled or logged)."""
        return self.kind != NEW

    def describe(self) -> str:
        """One line for a report: 'restart-state: Good, due in 12 d'."""
        if self.kind == NEW:
            return f"{self.card_id}: new, not rated"
        if self.kind == LOGGED:
            return f"{self.card_id}: not due, logged only"
        name = RATING_NAMES.get(self.rating, str(self.rating))
        if self.due is None or self.rated_at is None:
            return f"{self.card_id}: {name}"
        return f"{self.card_id}: {name}, due in {_due_in(self)}"


def _due_in(change: CardChange) -> str:
    assert change.due is not None and change.rated_at is not None
    if change.due_state == REVIEW_STATE:  # due by day, as the queue counts it
        hour = change.day_start_hour
        return f"{(learner_date(change.due, hour) - learner_date(change.rated_at, hour)).days} d"
    minutes = max(0.0, (change.due - change.rated_at).total_seconds() / 60)
    if minutes < 60:
        return f"{max(1, round(minutes))} min"
    return f"{round(minutes / 60)} h"


class _NewCard(Exception):
    """Raised inside the rating's transaction when the card turns out never reviewed."""


def is_new_state(state: StateDict | None) -> bool:
    return state is None or state.get("state") is None


def kept_schedule(before: StateDict | None) -> StateDict:
    """A card studied while not due: its review is logged, its schedule kept (custom study)."""
    return dict(before or {})


def rate_from_outside(
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
) -> CardChange:
    """Rate `card_id` by the rule above; the decision is taken on the state read inside the
    rating's own transaction. ValueError for a rating outside 1..4."""
    if rating not in RATING_NAMES:
        raise ValueError(f"rating must be 1..4, got {rating!r}")
    moment = (now or utc_now()).astimezone(UTC)
    settings = settings or Settings()
    scheduler = scheduler or make_scheduler(settings)
    if is_new_state(db.review.card_state(card_id)):
        return CardChange(card_id, rating, NEW)
    day_end = next_day_start(moment, settings.day_start_hour)
    kept: list[bool] = []

    def schedule(before: StateDict | None) -> StateDict:
        if before is None or before.get("state") is None:
            raise _NewCard
        if not due_at(before.get("state"), before.get("due"), moment, day_end):
            kept.append(True)
            return kept_schedule(before)
        return next_state(scheduler, before, rating, moment, settings, card_id=card_id)

    try:
        rated = rate_card(db, card_id, deck_id, rating, content_hash=content_hash,
                          now=moment, duration_ms=duration_ms, settings=settings,
                          schedule=schedule)  # fmt: skip
    except _NewCard:  # reviewed by nobody after all (read again in the transaction)
        return CardChange(card_id, rating, NEW)
    except CallerError as carried:
        if isinstance(carried.error, _NewCard):
            return CardChange(card_id, rating, NEW)
        raise
    if kept:
        return CardChange(card_id, rating, LOGGED, rated_at=moment, rated=rated)
    return CardChange(card_id, rating, RESCHEDULED, rated.due, moment, rated.after.get("state"),
                      rated, settings.day_start_hour)  # fmt: skip
