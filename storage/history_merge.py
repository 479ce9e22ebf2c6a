"""Move the review history of replaced card ids onto the card that replaces them (a deck's
`replaces:` field), in one transaction. Idempotent: once moved, the old ids have nothing left.

A replacing card that already has state keeps it; replaced ids that also have state are then
left alone and reported as conflicts (nothing is merged or deleted silently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlmodel import col, select, update

from storage.db import Database
from storage.tables import CardState, ReviewLog


@dataclass
class MergeReport:
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # both have state: kept new


def merge_replaced(
    db: Database, replacements: Mapping[str, tuple[str, Sequence[str]]]
) -> MergeReport:
    """`replacements`: new card id -> (its deck id, the ids it replaces). For a new id without
    state, the state of the most recently reviewed replaced id becomes its state and every log
    row of every replaced id is re-keyed to it; the old rows are removed."""
    report = MergeReport()
    if not replacements:
        return report
    with db.session() as session:
        for new_id, (deck_id, old_ids) in replacements.items():
            olds = [o for o in dict.fromkeys(old_ids) if o != new_id]
            rows = [r for o in olds if (r := session.get(CardState, o)) is not None]
            logged = set(
                session.exec(
                    select(ReviewLog.card_id).where(col(ReviewLog.card_id).in_(olds))
                ).all()
            )
            if not rows and not logged:
                continue
            if session.get(CardState, new_id) is not None:
                report.conflicts.extend((r.card_id, new_id) for r in rows)
                continue
            newest = max(rows, key=lambda r: (r.last_review is not None, r.last_review or 0),
                         default=None)  # fmt: skip
            if newest is not None:
                moved = CardState(**{**newest.model_dump(), "card_id": new_id, "deck_id": deck_id})
                for row in rows:
                    session.delete(row)
                session.flush()
                session.add(moved)
            session.exec(  # type: ignore[call-overload]
                update(ReviewLog)
                .where(col(ReviewLog.card_id).in_(olds))
                .values(card_id=new_id, deck_id=deck_id)
            )
            report.moved.extend(
                (o, new_id) for o in olds if o in logged or o in {r.card_id for r in rows}
            )
    return report
