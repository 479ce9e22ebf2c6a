"""The review log as plain rows, for the FSRS optimizer and the CSV export (UI-free).

Each row carries what the FSRS tools read (fsrs-optimizer's review-log schema): card id, review
time, rating 1..4, the card's state *before* the review (0 New, 1 Learning, 2 Review,
3 Relearning) and the time spent in milliseconds.

Custom-study ratings of cards that were not due (drill.review.study: logged, schedule kept) are
left out, as Anki's optimizer leaves out filtered-deck reviews that did not reschedule: the card
was seen early on purpose, and fitting FSRS to those reviews would skew the personal parameters.
Such a row is recognised by its state after: a real review sets `last_review` to its own time,
a kept schedule leaves the earlier one.

A reset (the browser's "reset": the card is new again, its log kept) writes no log row. The fit
starts the card's history afresh after it (drill.review.optimize.since_last_reset): a later
review of the card is one of a new card; a card not reviewed since is new now, and its reviews
come back marked `reset_after`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storage.db import Database

NEW = 0  # review_state of a card's first review (fsrs' own State enum has no New)


@dataclass(frozen=True, slots=True)
class LoggedReview:
    card_id: str
    reviewed_at: datetime  # aware UTC
    rating: int  # 1 Again .. 4 Easy
    state: int  # before the review: 0 New, 1 Learning, 2 Review, 3 Relearning
    duration_ms: int
    reset_after: bool = False  # the card was reset after this review (and not reviewed since)


def _state_before(text: str | None) -> int:
    if not text:
        return NEW
    try:
        state = json.loads(text).get("state")
    except (ValueError, AttributeError):
        return NEW
    return state if isinstance(state, int) and 1 <= state <= 3 else NEW


def _json(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def schedule_kept(state_before: str | None, state_after: str | None) -> bool:
    """Whether a log row is a rating that left the schedule as it was (custom study ahead)."""
    last = _json(state_before).get("last_review")
    return bool(last) and _json(state_after).get("last_review") == last


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def read_review_log(db: Database, deck_ids: set[str] | None = None) -> list[LoggedReview]:
    """read_review_log_counted without the count of damaged rows."""
    return read_review_log_counted(db, deck_ids)[0]


def read_review_log_counted(
    db: Database, deck_ids: set[str] | None = None
) -> tuple[list[LoggedReview], int]:
    """Every review in the log (of the decks in `deck_ids`, when given), oldest first, and
    how many rows were left out as damaged (values drill never writes, storage.domains: an
    unparsable time, a rating outside 1..4). Custom-study ratings that kept the card's
    schedule (see the module docstring) are left out too, not counted. The reviews of a
    card reset since them come marked `reset_after`."""
    read = db.review.log_read()
    reset = db.review.unreviewed_since_reset()
    reviews = [
        LoggedReview(
            r.card_id, _utc(r.reviewed_at), r.rating, _state_before(r.state_before),
            max(0, int(r.duration_ms or 0)), r.card_id in reset,
        )
        for r in read.rows
        if (deck_ids is None or r.deck_id in deck_ids)
        and not schedule_kept(r.state_before, r.state_after)
    ]  # fmt: skip
    return reviews, len(read.skipped)
