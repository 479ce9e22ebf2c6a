"""Apply the decks' `replaces:` fields to the database when the decks load: the review history
and state of each replaced id move to the card that replaces it (storage.history_merge does it
in one transaction, once). Returns a one-line notice for what the user should know."""

from __future__ import annotations

from drill.decks.loader import DeckSet
from storage.db import Database
from storage.errors import DatabaseError
from storage.history_merge import MergeReport, merge_replaced


def replacements(decks: DeckSet) -> dict[str, tuple[str, list[str]]]:
    """New card id -> (its deck, the ids it replaces), for every card with `replaces:`."""
    return {
        card.id: (loaded.deck.deck, list(card.replaces))
        for loaded in decks.decks
        for card in loaded.deck.cards
        if card.replaces
    }


def merge_replaced_history(decks: DeckSet, db: Database) -> tuple[MergeReport, str | None]:
    """Move replaced ids' history; the notice names clashes (both ids have state: the
    replacing card's is kept) or a database that refused. Never raises a storage error."""
    wanted = replacements(decks)
    if not wanted:
        return MergeReport(), None
    try:
        report = merge_replaced(db, wanted)
    except DatabaseError as error:
        return MergeReport(), f"Could not move the history of replaced cards: {error}"
    if not report.conflicts:
        return report, None
    pairs = ", ".join(f"{old} -> {new}" for old, new in report.conflicts[:3])
    more = f" and {len(report.conflicts) - 3} more" if len(report.conflicts) > 3 else ""
    return report, (
        f"Kept the history of the replacing card (both have one): {pairs}{more}. "
        "The replaced card's history stays under its old id."
    )
