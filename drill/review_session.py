"""One review session: the queue, the current card, rating (committed before moving on), undo,
bury and suspend. No UI: the TUI (drill/tui) and tests drive it.

A card rated so that it is due again within `learn_ahead_minutes` (Again on a new card: 1-10
min) comes back in this session: once due it goes before the remaining cards, and when nothing
else is left it is shown early, as Anki does.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from drill.deck_loader import DeckSet
from drill.deck_models import Card
from drill.review_queue import QueueEntry, build_queue, day_start, next_day_start
from drill.scheduler import StateDict, make_scheduler, preview_intervals, rate_card, utc_now
from drill.settings import Settings, load_settings
from storage.db import Database
from storage.snapshot import read_snapshot


@dataclass(frozen=True)
class QueuedCard:
    card: Card
    deck_id: str
    is_new: bool
    edited: bool = False  # the text changed since this card's last review (history kept)


@dataclass(frozen=True)
class SessionStats:
    reviewed: int
    again: int
    elapsed_s: float


@dataclass
class _Rated:
    entry: QueueEntry
    log_id: int
    rating: int
    before: StateDict | None
    hash_before: str | None


class ReviewSession:
    def __init__(
        self,
        decks: DeckSet,
        db: Database,
        *,
        deck_id: str | None = None,
        settings: Settings | None = None,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._decks = decks
        self._db = db
        self._now = now
        self._settings = settings or load_settings()
        self._scheduler = make_scheduler(self._settings)
        snapshot = read_snapshot(db.path)
        if snapshot is None:  # open_database() migrated it, so only a newer drill gets here
            raise RuntimeError(f"cannot read the schedule from {db.path}")
        started = now()
        self._started = started
        introduced = snapshot.introduced_since(day_start(started, self._settings.day_start_hour))
        entries = build_queue(
            decks.outline(),
            snapshot.schedules,
            started,
            new_limit=self._settings.new_cards_per_day,
            introduced_today=introduced,
            deck_id=deck_id,
        )
        self._hashes = {cid: row.content_hash for cid, row in snapshot.schedules.items()}
        self._queue: deque[QueueEntry] = deque(entries)
        self._learning: list[tuple[datetime, int, QueueEntry]] = []  # sorted by due
        self._learning_seq = 0
        self._states: dict[str, StateDict | None] = {}
        self._undo: list[_Rated] = []
        self._reviewed = 0
        self._again = 0
        self._current: QueuedCard | None = None
        self._current_entry: QueueEntry | None = None
        self._advance()

    # --- reading -----------------------------------------------------------------------------
    @property
    def current(self) -> QueuedCard | None:
        return self._current

    @property
    def remaining(self) -> int:
        """Cards still to show in this session, the current one included."""
        return len(self._queue) + len(self._learning) + (1 if self._current else 0)

    @property
    def stats(self) -> SessionStats:
        elapsed = (self._now() - self._started).total_seconds()
        return SessionStats(self._reviewed, self._again, max(0.0, elapsed))

    def preview_intervals(self) -> dict[int, timedelta]:
        """Rating (1..4) -> the interval rating the current card that way would give."""
        if self._current is None:
            return {}
        return preview_intervals(self._scheduler, self._state(self._current.card.id), self._now())

    # --- acting ------------------------------------------------------------------------------
    def rate(self, rating: int, duration_ms: int) -> None:
        """Rate the current card 1..4; committed to SQLite before this returns, then advance."""
        if rating not in (1, 2, 3, 4):
            raise ValueError(f"rating must be 1..4, got {rating!r}")
        current, entry = self._current, self._current_entry
        if current is None or entry is None:
            return
        now = self._now()
        content_hash = current.card.content_hash()
        rated = rate_card(
            self._db,
            current.card.id,
            current.deck_id,
            rating,
            content_hash=content_hash,
            now=now,
            duration_ms=duration_ms,
            scheduler=self._scheduler,
        )
        self._undo.append(
            _Rated(entry, rated.log_id, rating, rated.before, self._hashes.get(current.card.id))
        )
        self._states[current.card.id] = rated.after
        self._hashes[current.card.id] = content_hash
        self._reviewed += 1
        self._again += rating == 1
        if rated.due <= now + timedelta(minutes=self._settings.learn_ahead_minutes):
            self._learning_seq += 1
            again = QueueEntry(entry.card_id, entry.deck_id, False)
            bisect.insort(self._learning, (rated.due, self._learning_seq, again))
        self._advance()

    def undo(self) -> bool:
        """Undo the last rating of this session: state restored, log row deleted, that card
        current again. False when there is nothing to undo (or the database refused)."""
        if not self._undo:
            return False
        last = self._undo[-1]
        if not self._db.undo_review(last.log_id):
            return False
        self._undo.pop()
        self._learning = [item for item in self._learning if item[2].card_id != last.entry.card_id]
        self._queue = deque(e for e in self._queue if e.card_id != last.entry.card_id)
        if self._current_entry is not None and self._current_entry.card_id != last.entry.card_id:
            self._queue.appendleft(self._current_entry)
        self._states[last.entry.card_id] = last.before
        self._hashes[last.entry.card_id] = last.hash_before
        self._reviewed -= 1
        self._again -= last.rating == 1
        self._show(last.entry)
        return True

    def bury(self) -> None:
        """Hide the current card until the next day starts (local day_start_hour)."""
        current = self._current
        if current is None:
            return
        until = next_day_start(self._now(), self._settings.day_start_hour)
        self._db.set_buried(current.card.id, current.deck_id, until)
        self._drop(current.card.id)

    def suspend(self) -> None:
        """Take the current card out of review until it is unsuspended."""
        current = self._current
        if current is None:
            return
        self._db.set_suspended(current.card.id, current.deck_id, True)
        self._drop(current.card.id)

    # --- internals ---------------------------------------------------------------------------
    def _state(self, card_id: str) -> StateDict | None:
        if card_id not in self._states:
            self._states[card_id] = self._db.card_state(card_id)
        return self._states[card_id]

    def _drop(self, card_id: str) -> None:
        self._learning = [item for item in self._learning if item[2].card_id != card_id]
        self._advance()

    def _show(self, entry: QueueEntry) -> None:
        card = self._decks.card(entry.card_id)
        if card is None:  # the deck changed under us; skip the card
            self._advance()
            return
        stored = self._hashes.get(card.id)
        edited = stored is not None and stored != card.content_hash()
        self._current = QueuedCard(card, entry.deck_id, entry.is_new, edited)
        self._current_entry = entry

    def _advance(self) -> None:
        now = self._now()
        entry: QueueEntry | None = None
        if self._learning and (self._learning[0][0] <= now or not self._queue):
            entry = self._learning.pop(0)[2]
        elif self._queue:
            entry = self._queue.popleft()
        if entry is None:
            self._current = self._current_entry = None
            return
        self._show(entry)
