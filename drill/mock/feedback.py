"""Adapters from mock rounds to the review domain: mastery for prompt choice, and rating weak
cards (Again/Hard) into the review schedule through drill.review.scheduler.rate_card.

A rating of a card never reviewed before introduces it, which counts against the day's new-card
limit. A text round rates only prompts the user answered (drill.mock.grading), so its cards were
seen; a coding round's failed checks point at cards the user may never have seen, so by default a
never-reviewed card is left new rather than rated (`introduce=False`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drill.mock.round import RateCard
from drill.mock.selection import CardEntry

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet
    from storage.db import Database


def card_entries(decks: DeckSet) -> list[CardEntry]:
    return [CardEntry(ld.deck.deck, card) for ld in decks.decks for card in ld.deck.cards]


def mastery(db: Database) -> dict[str, float]:
    """Card id -> FSRS stability in days, for every card reviewed at least once."""
    return db.review.stabilities()


def review_rater(db: Database, decks: DeckSet, *, introduce: bool = False) -> RateCard:
    """rate(card_id, deck_id, rating) -> whether it was rated: one review-log row per weak card,
    committed at once. Without `introduce`, a card never reviewed is not rated (it stays new and
    does not use up the day's new-card limit)."""
    from drill.review.scheduler import rate_card

    def rate(card_id: str, deck_id: str, rating: int) -> bool:
        if not introduce and db.review.card_state(card_id) is None:
            return False
        card = decks.card(card_id)
        content_hash = card.content_hash() if card is not None else None
        rate_card(db, card_id, deck_id, rating, content_hash=content_hash)
        return True

    return rate
