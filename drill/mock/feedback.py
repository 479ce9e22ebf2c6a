"""Adapters from mock rounds to the review domain: mastery for prompt choice, and rating weak
cards (Again/Hard) into the review schedule by the rule for every rating from outside review
(drill.review.outside.rate_from_outside): a card never reviewed is not rated (a mock round never
spends the day's new-card limit), a card not due is logged with its schedule kept, a due card is
rescheduled. The rater returns what it did, for the report to show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drill.mock.round import RateCard
from drill.mock.selection import CardEntry

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet
    from drill.review.outside import CardChange
    from storage.db import Database


def card_entries(decks: DeckSet) -> list[CardEntry]:
    return [CardEntry(ld.deck.deck, card) for ld in decks.decks for card in ld.deck.cards]


def mastery(db: Database) -> dict[str, float]:
    """Card id -> FSRS stability in days, for every card reviewed at least once."""
    return db.review.stabilities()


def review_rater(db: Database, decks: DeckSet) -> RateCard:
    """rate(card_id, deck_id, rating) -> the CardChange: one review-log row per weak card that
    is not new, committed at once."""
    from drill.review.outside import rate_from_outside

    def rate(card_id: str, deck_id: str, rating: int) -> CardChange:
        card = decks.card(card_id)
        content_hash = card.content_hash() if card is not None else None
        return rate_from_outside(db, card_id, deck_id, rating, content_hash=content_hash)

    return rate


def noting_changed(rate: RateCard, changed: list[str]) -> RateCard:
    """`rate`, appending to `changed` the id of every card whose review it wrote (for the
    screens that show schedules to read them again)."""

    def rate_and_note(card_id: str, deck_id: str, rating: int) -> CardChange:
        change = rate(card_id, deck_id, rating)
        if change.changed:
            changed.append(card_id)
        return change

    return rate_and_note
