"""One review session: the queue, the current card, rating (committed before moving on), undo,
bury and suspend. No UI: the TUI (drill/tui) and tests drive it.

A card due within `learn_ahead_minutes` (Again on a new card: 1-10 min) is a learning card of
this session, whether it was rated in this session or found so when the session opened: once
due it goes before the remaining cards, and when nothing else is left it is shown early, as
Anki does. A review card is due for its whole learner day (queue.is_due), so one due later
today is an ordinary due card, never held back as a learning one.

Cards whose stored row holds values drill never writes are skipped; `notice` says so, once per
session, for the screen to show.

`u` undoes the last action of the session, rating, bury or suspend, and again the one before
(a stack): each undo restores the card's stored state and makes it the current card again.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from drill.decks.loader import DeckSet
from drill.decks.models import Card
from drill.errors import StorageError
from drill.review.deadline import planned_due, row_from_state
from drill.review.outside import LOGGED, RESCHEDULED, CardChange, kept_schedule, rate_from_outside
from drill.review.queue import QueueEntry, is_due, next_day_start, planned_review_day, queue_for
from drill.review.scheduler import (
    RatedCard,
    leech_notice,
    make_scheduler,
    preview_intervals,
    rate_card,
)
from drill.review.study import StudyFilter, study_queue
from drill.settings import Settings, load_settings
from drill.times import utc_now
from storage.db import Database
from storage.schema_names import StateDict
from storage.snapshot import read_snapshot


@dataclass(frozen=True)
class QueuedCard:
    card: Card
    deck_id: str
    is_new: bool
    edited: bool = False  # the text changed since this card's last review (history kept)
    state: int | None = None  # fsrs State: 1 learning, 2 review, 3 relearning; None: new

    @property
    def kind(self) -> str:
        """What the header calls it: new, learning, review or relearning."""
        return {1: "learning", 2: "review", 3: "relearning"}.get(self.state or 0, "new")


@dataclass(frozen=True)
class SessionStats:
    reviewed: int
    again: int
    elapsed_s: float


@dataclass
class _Undoable:
    """One action of the session, enough to take it back."""

    kind: str  # "rate" | "bury" | "suspend"
    entry: QueueEntry
    before: StateDict | None  # the card's stored state before the action
    log_id: int = 0  # rate: the log row to delete
    rating: int = 0
    hash_before: str | None = None
    requeued: bool = False  # custom study: an Again re-queued the card at the end


class ReviewSession:
    def __init__(
        self,
        decks: DeckSet,
        db: Database,
        *,
        deck_id: str | None = None,
        settings: Settings | None = None,
        now: Callable[[], datetime] = utc_now,
        study: StudyFilter | None = None,
    ) -> None:
        self._decks = decks
        self._db = db
        self._now = now
        self._settings = settings or load_settings()
        self._scheduler = make_scheduler(self._settings)
        snapshot = read_snapshot(db.path, strict=True)  # damaged: storage DatabaseError
        if snapshot is None:  # open_database() migrated it, so only a newer drill gets here
            raise StorageError(f"cannot read the schedule from {db.path}")
        self.notice: str | None = snapshot.notice  # cards skipped as damaged, or None
        started = now()
        self._started = started
        self.study = study
        self._ahead: frozenset[str] = frozenset()  # custom study: not due, schedule kept
        self._learning: list[tuple[datetime, int, QueueEntry]] = []  # sorted by due
        self._learning_seq = 0
        # the interview plan (drill.review.deadline): the queue reads the planned schedules,
        # and a preview shows the due the plan gives, so previews equal ratings
        day = planned_review_day(started, self._settings, snapshot, decks.index)
        self._deadline = day.deadline
        self._schedules = dict(snapshot.schedules)  # kept current: ratings, undo
        if study is not None:
            plan = study_queue(decks, snapshot.schedules, started, study, self._settings)
            entries, self._ahead = plan.entries, plan.ahead
        else:
            planned = day.planned(snapshot.schedules, started)
            entries = []
            for entry in queue_for(decks.outline(), snapshot.schedules, started, day, deck_id):
                row = planned.get(entry.card_id)
                if (
                    row is not None
                    and row.due is not None
                    and not is_due(row, started, day.next_start)
                ):  # learn-ahead, as if rated just now; a review card is due all its day
                    self._add_learning(row.due, entry)
                else:
                    entries.append(entry)
        self._hashes = {cid: row.content_hash for cid, row in snapshot.schedules.items()}
        self._kinds = {cid: row.state for cid, row in snapshot.schedules.items()}
        self._queue: deque[QueueEntry] = deque(entries)
        self._states: dict[str, StateDict | None] = {}
        self._undo: list[_Undoable] = []
        self.leech_notice: str | None = None  # set by the rating that made a card a leech
        self._leech_notices: list[str] = []  # since the screen last took them (take_notices)
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
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def last_action(self) -> str | None:
        """What `u` would undo: "rate", "bury" or "suspend"."""
        return self._undo[-1].kind if self._undo else None

    @property
    def stats(self) -> SessionStats:
        elapsed = (self._now() - self._started).total_seconds()
        return SessionStats(self._reviewed, self._again, max(0.0, elapsed))

    def preview_intervals(self) -> dict[int, timedelta]:
        """Rating (1..4) -> the interval rating the current card that way would give."""
        if self._current is None:
            return {}
        card_id = self._current.card.id  # seeds the fuzz: the preview is what the rating gives
        deck_id, now = self._current.deck_id, self._now()

        def planned(after: StateDict) -> datetime:  # the due the plan gives (none: FSRS's)
            return planned_due(self._schedules, self._deadline, card_id, deck_id, after, now,
                               self._settings.day_start_hour)  # fmt: skip

        return preview_intervals(self._scheduler, self._state(card_id), now, self._settings,
                                 card_id=card_id, planned=planned)  # fmt: skip

    # --- acting ------------------------------------------------------------------------------
    def rate(self, rating: int, duration_ms: int) -> None:
        """Rate the current card 1..4; committed to SQLite before this returns, then advance."""
        if rating not in (1, 2, 3, 4):
            raise ValueError(f"rating must be 1..4, got {rating!r}")
        current, entry = self._current, self._current_entry
        if current is None or entry is None:
            return
        self._record(current.card, entry, rating, duration_ms)
        self._advance()

    def rate_card(
        self,
        card_id: str,
        deck_id: str,
        rating: int,
        duration_ms: int = 0,
        *,
        from_outside: bool = False,
    ) -> CardChange:
        """Rate the named card once and say what changed. The card on screen (a lab or an
        exercise opened from it) is rated as rate() does when it is the current card; a card
        that only links the same exercise (`from_outside`), or any card not current, goes by
        the rule for ratings from outside review (drill.review.outside: a new card is not rated,
        a card not due is logged with its schedule kept), and when a review was written it
        leaves this session's queue (a learning one comes back by its new due). Raises KeyError
        for a card not in the decks, so that a caller never reports a rating not written."""
        if rating not in (1, 2, 3, 4):
            raise ValueError(f"rating must be 1..4, got {rating!r}")
        current, entry = self._current, self._current_entry
        is_current = current is not None and entry is not None and current.card.id == card_id
        if is_current and not from_outside:
            assert current is not None and entry is not None
            rated = self._record(current.card, entry, rating, duration_ms)
            self._advance()
            if entry.card_id in self._ahead:
                return CardChange(card_id, rating, LOGGED, rated_at=self._now(), rated=rated)
            return CardChange(card_id, rating, RESCHEDULED, rated.due, self._now(),
                              rated.after.get("state"), rated,
                              self._settings.day_start_hour)  # fmt: skip
        card = self._decks.card(card_id)
        if card is None:
            raise KeyError(f"no card {card_id!r} in the decks")
        change = rate_from_outside(self._db, card_id, deck_id, rating,
                                   content_hash=card.content_hash(), now=self._now(),
                                   duration_ms=duration_ms, settings=self._settings,
                                   scheduler=self._scheduler)  # fmt: skip
        if change.rated is not None:
            taken = (entry if is_current else self._take(card_id)) or QueueEntry(
                card_id, deck_id, False
            )
            self._after_rating(card, taken, rating, change.rated, kept=change.kind == LOGGED,
                               requeue=False)  # fmt: skip
            if is_current:
                self._advance()
        return change

    def _record(self, card: Card, entry: QueueEntry, rating: int, duration_ms: int) -> RatedCard:
        """Write one rating of `card` and queue it again if it is due within learn-ahead."""
        now = self._now()
        ahead = entry.card_id in self._ahead
        rated = rate_card(
            self._db,
            card.id,
            entry.deck_id,
            rating,
            content_hash=card.content_hash(),
            now=now,
            duration_ms=duration_ms,
            settings=self._settings,
            scheduler=self._scheduler,
            schedule=kept_schedule if ahead else None,
        )
        self._after_rating(card, entry, rating, rated, kept=ahead, requeue=True)
        return rated

    def _after_rating(
        self, card: Card, entry: QueueEntry, rating: int, rated: RatedCard, *, kept: bool,
        requeue: bool,
    ) -> None:  # fmt: skip
        """The session's bookkeeping for a rating written: undo, counts, leech notice; a card
        rescheduled comes back when due within learn-ahead; one whose schedule was `kept` (not
        due) comes back once at the end after an Again only when `requeue` (custom study)."""
        now = self._now()
        content_hash = card.content_hash()
        undo = _Undoable("rate", entry, rated.before, rated.log_id, rating,
                         self._hashes.get(card.id))  # fmt: skip
        self._undo.append(undo)
        self._states[card.id] = rated.after
        self._schedules[card.id] = row_from_state(card.id, entry.deck_id, rated.after)
        self._hashes[card.id] = content_hash
        self._kinds[card.id] = rated.after.get("state")
        self._reviewed += 1
        self._again += rating == 1
        self.leech_notice = None
        if rated.leech_hit:
            self.leech_notice = leech_notice(card.id, rated.after)
            self._leech_notices.append(self.leech_notice)
        if kept:
            if rating == 1 and requeue:  # once more at the end of the study session
                self._queue.append(entry)
                undo.requeued = True
        elif not rated.after.get("suspended") and rated.due <= now + timedelta(
            minutes=self._settings.learn_ahead_minutes
        ):
            self._add_learning(rated.due, QueueEntry(entry.card_id, entry.deck_id, False))

    def _take(self, card_id: str) -> QueueEntry | None:
        """Take a card that is not current out of the queue and the learning list."""
        found = next((e for e in self._queue if e.card_id == card_id), None)
        learning = next((item[2] for item in self._learning if item[2].card_id == card_id), None)
        self._queue = deque(e for e in self._queue if e.card_id != card_id)
        self._learning = [item for item in self._learning if item[2].card_id != card_id]
        return found or learning

    def take_notices(self) -> list[str]:
        """The leech notices of every rating since the last call, oldest first, each naming its
        card (an exercise or a lab rates several cards at once; each one's notice is kept)."""
        notices, self._leech_notices = self._leech_notices, []
        return notices

    def undo(self) -> bool:
        """Undo the last action of this session (rating: state restored, log row deleted;
        bury or suspend: flags restored); that card is current again. False when there is
        nothing to undo (or the database refused)."""
        if not self._undo:
            return False
        last = self._undo[-1]
        card_id = last.entry.card_id
        if last.kind == "rate":
            if not self._db.review.undo_review(last.log_id):
                return False
            self._states[card_id] = last.before
            self._restore_schedule(card_id, last.entry.deck_id, last.before)
            self._hashes[card_id] = last.hash_before
            self._kinds[card_id] = (last.before or {}).get("state")
            self._reviewed -= 1
            self._again -= last.rating == 1
        else:
            self._db.review.restore_flags(card_id, last.entry.deck_id, last.before)
            self._states.pop(card_id, None)
        self._undo.pop()
        self._learning = [item for item in self._learning if item[2].card_id != card_id]
        if last.requeued:  # drop the study re-queue (the last copy in the queue)
            for index in range(len(self._queue) - 1, -1, -1):
                if self._queue[index].card_id == card_id:
                    del self._queue[index]
                    break
        self._queue = deque(e for e in self._queue if e.card_id != card_id or last.requeued)
        if self._current_entry is not None and self._current_entry.card_id != card_id:
            self._queue.appendleft(self._current_entry)
        self._show(last.entry)
        return True

    def bury(self) -> None:
        """Hide the current card until the next day starts (local day_start_hour)."""
        current, entry = self._current, self._current_entry
        if current is None or entry is None:
            return
        before = self._db.review.card_state(current.card.id)
        until = next_day_start(self._now(), self._settings.day_start_hour)
        self._db.review.set_buried(current.card.id, current.deck_id, until)
        self._undo.append(_Undoable("bury", entry, before))
        self._drop(current.card.id)

    def suspend(self) -> None:
        """Take the current card out of review until it is unsuspended."""
        current, entry = self._current, self._current_entry
        if current is None or entry is None:
            return
        before = self._db.review.card_state(current.card.id)
        self._db.review.set_suspended(current.card.id, current.deck_id, True)
        self._undo.append(_Undoable("suspend", entry, before))
        self._drop(current.card.id)

    # --- internals ---------------------------------------------------------------------------
    def _state(self, card_id: str) -> StateDict | None:
        if card_id not in self._states:
            self._states[card_id] = self._db.review.card_state(card_id)
        return self._states[card_id]

    def _restore_schedule(self, card_id: str, deck_id: str, before: StateDict | None) -> None:
        if before is None:
            self._schedules.pop(card_id, None)
        else:
            self._schedules[card_id] = row_from_state(card_id, deck_id, before)

    def _add_learning(self, due: datetime, entry: QueueEntry) -> None:
        self._learning_seq += 1
        bisect.insort(self._learning, (due, self._learning_seq, entry))

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
        state = self._kinds.get(card.id)
        self._current = QueuedCard(card, entry.deck_id, entry.is_new, edited, state)
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
