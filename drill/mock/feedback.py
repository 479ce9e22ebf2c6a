"""Adapters from mock rounds to helper A's review domain: mastery for prompt choice, and rating
weak cards (Again/Hard) into the review schedule through drill.review.scheduler.rate_card."""

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


def review_rater(db: Database, decks: DeckSet) -> RateCard:
    """rate(card_id, deck_id, rating): one review-log row per weak card, committed at once."""
    from drill.review.scheduler import rate_card

    def rate(card_id: str, deck_id: str, rating: int) -> None:
        card = decks.card(card_id)
        content_hash = card.content_hash() if card is not None else None
        rate_card(db, card_id, deck_id, rating, content_hash=content_hash)

    return rate
