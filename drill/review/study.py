"""Custom study: review cards chosen by tag, level or deck beyond today's limits (the evening
before an interview), modelled on Anki's filtered decks.

How the schedule is affected (README "Custom study" says the same):
- a card that is due, or new, is rated exactly as in a normal review (a new card counts as
  introduced today);
- a card that is not due yet is shown and its rating is logged (review history, stats), but its
  schedule (due date, stability, difficulty, reps, lapses) is left unchanged: studying ahead
  does not push it further out nor pull it in. A card rated Again comes back once at the end
  of the study session.
Suspended and buried cards are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from drill.review.queue import QueueEntry, is_available, is_due, is_new, next_day_start
from drill.settings import Settings
from storage.snapshot import ScheduleRow

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet

LEVELS = ("easy", "medium", "hard")
MAX_LIMIT = 1000


@dataclass(frozen=True)
class StudyFilter:
    tags: tuple[str, ...] = ()  # any of these tags (empty: any card)
    level: str | None = None  # easy | medium | hard
    deck_id: str | None = None
    limit: int = 50

    def __post_init__(self) -> None:
        if self.level is not None and self.level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {self.level!r}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"count must be between 1 and {MAX_LIMIT}, got {self.limit}")

    def describe(self) -> str:
        parts = [f"tag {', '.join(self.tags)}" if self.tags else "",
                 self.level or "", f"deck {self.deck_id}" if self.deck_id else ""]  # fmt: skip
        chosen = " · ".join(p for p in parts if p)
        return f"Custom study · {chosen}" if chosen else "Custom study"


def parse_filter(tags: str, level: str, deck: str, count: str) -> StudyFilter:
    """A filter from the form's text fields; ValueError with a one-line message."""
    count = count.strip() or "50"
    if not count.isdigit():
        raise ValueError(f"count must be a whole number, got {count!r}")
    names = tuple(t for t in (p.strip() for p in tags.replace(",", " ").split()) if t)
    return StudyFilter(names, level.strip().lower() or None, deck.strip() or None, int(count))


@dataclass(frozen=True)
class StudyPlan:
    entries: list[QueueEntry]
    ahead: frozenset[str] = field(default_factory=frozenset)  # not due yet: schedule kept


def study_queue(
    decks: DeckSet,
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    chosen: StudyFilter,
    settings: Settings | None = None,
) -> StudyPlan:
    """Matching cards: due ones (oldest first), then not-yet-due ones (soonest due first),
    then new ones in deck order; at most `chosen.limit`."""
    # a review card is due by day (queue.is_due), as in a normal session
    day_end = next_day_start(now, settings.day_start_hour) if settings is not None else None
    due: list[tuple[datetime, QueueEntry]] = []
    ahead: list[tuple[datetime, QueueEntry]] = []
    fresh: list[QueueEntry] = []
    wanted = set(chosen.tags)
    for loaded in decks.decks:
        deck_id = loaded.deck.deck
        if chosen.deck_id is not None and deck_id != chosen.deck_id:
            continue
        for card in loaded.deck.cards:
            if chosen.level is not None and str(card.level) != chosen.level:
                continue
            if wanted and not wanted.intersection(card.tags):
                continue
            row = schedules.get(card.id)
            if not is_available(row, now):
                continue
            if is_new(row):
                fresh.append(QueueEntry(card.id, deck_id, True))
            elif row is not None and row.due is not None:
                target = due if is_due(row, now, day_end) else ahead
                target.append((row.due, QueueEntry(card.id, deck_id, False)))
    due.sort(key=lambda item: item[0])
    ahead.sort(key=lambda item: item[0])
    entries = ([e for _, e in due] + [e for _, e in ahead] + fresh)[: chosen.limit]
    ahead_ids = {e.card_id for _, e in ahead}
    return StudyPlan(entries, frozenset(e.card_id for e in entries if e.card_id in ahead_ids))
