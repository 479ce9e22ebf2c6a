"""The review repository: card state and the review log (tables card_state and review_log,
storage/tables.py). Each method is one short transaction, committed before it returns."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, func, select

from storage.db import CallerError, from_db_time, to_db_time
from storage.domains import card_state_problems, parse_time, review_log_problems
from storage.errors import DamagedRow
from storage.schema_names import StateDict
from storage.snapshot import NEWEST_TIMED, TIMED, TYPICAL_MINIMUM, answer_seconds_median
from storage.tables import CardState, ReviewLog

if TYPE_CHECKING:
    from storage.db import Database

_DATETIME_FIELDS = ("due", "last_review", "buried_until", "introduced_at")
_STATE_FIELDS = (
    "state", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses",
    "suspended", "buried_until", "content_hash", "introduced_at", "leech",
)  # fmt: skip
_CHUNK = 500  # card ids per IN (...) query, well under SQLite's bound on parameters
_SCHEDULE_FIELDS = ("state", "step", "stability", "difficulty", "due", "last_review",
                    "buried_until", "introduced_at")  # fmt: skip


def state_of(row: CardState) -> StateDict:
    """The schedulable state of a card_state row, datetimes aware UTC."""
    state = {name: getattr(row, name) for name in _STATE_FIELDS}
    for name in _DATETIME_FIELDS:
        state[name] = from_db_time(state[name])
    return state


def state_to_json(state: StateDict | None) -> str | None:
    if state is None:
        return None
    return json.dumps(
        {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in state.items()},
        sort_keys=True,
    )


def state_from_json(text: str | None) -> StateDict | None:
    if text is None:
        return None
    state = json.loads(text)
    for name in _DATETIME_FIELDS:
        if state.get(name):
            state[name] = datetime.fromisoformat(state[name])
    return state


def _apply_state(row: CardState, state: StateDict) -> None:
    for name in _STATE_FIELDS:
        value = state.get(name, CardState.model_fields[name].default)
        if name in _DATETIME_FIELDS:
            value = to_db_time(value)
        setattr(row, name, value)


@dataclass(frozen=True)
class RecordedReview:
    log_id: int
    before: StateDict | None
    after: StateDict


@dataclass(frozen=True)
class LogRow:
    """One review_log row as the optimizer and the history read it (reviewed_at aware UTC)."""

    card_id: str
    deck_id: str
    reviewed_at: datetime
    rating: int
    state_before: str | None
    state_after: str | None
    duration_ms: int


def _checked(session: Session, card_id: str, path: object) -> None:
    """DamagedRow when the card's stored row holds values drill never writes: read raw (the
    ORM would fail on an unparsable time with a less useful message), before the scheduler
    could see them."""
    result = session.connection().exec_driver_sql(
        f"SELECT * FROM {CardState.__tablename__} WHERE card_id = ?", (card_id,)
    )
    values = result.fetchone()
    if values is None:
        return
    problems = card_state_problems(dict(zip(result.keys(), values, strict=True)))
    if problems:
        raise DamagedRow(
            f"{path}: card {card_id}: its stored schedule holds values drill never writes "
            f"({'; '.join(problems)}); skipped (see: drill db check)"
        )


@dataclass(frozen=True)
class LogRead:
    """The sound review_log rows, and the ids of the rows left out as damaged."""

    rows: list[LogRow]
    skipped: list[int]


class ReviewRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # --- reads -------------------------------------------------------------------------------
    def card_state(self, card_id: str) -> StateDict | None:
        """The card's stored state; DamagedRow when it holds values drill never writes."""
        with self.db.unit() as session:
            _checked(session, card_id, self.db.path)
            row = session.get(CardState, card_id)
            return None if row is None else state_of(row)

    def reviews(self, card_id: str | None = None) -> list[ReviewLog]:
        with self.db.unit() as session:
            query = select(ReviewLog).order_by(col(ReviewLog.id))
            if card_id is not None:
                query = query.where(ReviewLog.card_id == card_id)
            return list(session.exec(query))

    # --- writes ------------------------------------------------------------------------------
    def record_review(
        self,
        card_id: str,
        deck_id: str,
        rating: int,
        reviewed_at: datetime,
        duration_ms: int,
        content_hash: str | None,
        schedule: Callable[[StateDict | None], StateDict],
    ) -> RecordedReview:
        """Read the card's state, let `schedule(before) -> after` compute the new one, write the
        state and a log row, and commit; all in one IMMEDIATE transaction. DamagedRow (nothing
        written) when the stored state holds values drill never writes."""
        with self.db.unit() as session:
            _checked(session, card_id, self.db.path)
            row = session.get(CardState, card_id)
            before = None if row is None else state_of(row)
            try:
                after = dict(schedule(before))
            except Exception as error:
                raise CallerError(error) from error
            after["content_hash"] = content_hash
            if after.get("introduced_at") is None:
                after["introduced_at"] = reviewed_at
            if row is None:
                row = CardState(card_id=card_id, deck_id=deck_id)
            row.deck_id = deck_id
            _apply_state(row, after)
            session.add(row)
            log = ReviewLog(
                card_id=card_id,
                deck_id=deck_id,
                rating=rating,
                reviewed_at=to_db_time(reviewed_at),
                duration_ms=max(0, int(duration_ms)),
                state_before=state_to_json(before),
                state_after=state_to_json(after) or "{}",
                content_hash=content_hash,
            )
            session.add(log)
            session.flush()
            assert log.id is not None
            return RecordedReview(log.id, before, state_of(row))

    def undo_review(self, log_id: int) -> bool:
        """Delete a log row and restore the card's state from before it. Only the newest review
        of a card can be undone (else later reviews would be built on a state that vanished)."""
        with self.db.unit() as session:
            log = session.get(ReviewLog, log_id)
            if log is None:
                return False
            newest = session.exec(
                select(func.max(ReviewLog.id)).where(ReviewLog.card_id == log.card_id)
            ).one()
            if newest != log_id:
                return False
            before = state_from_json(log.state_before)
            row = session.get(CardState, log.card_id)
            if before is None:
                if row is not None:
                    session.delete(row)
            else:
                if row is None:
                    row = CardState(card_id=log.card_id, deck_id=log.deck_id)
                _apply_state(row, before)
                session.add(row)
            session.delete(log)
            return True

    def _upsert_flags(self, card_id: str, deck_id: str, **values: Any) -> None:
        with self.db.unit() as session:
            row = session.get(CardState, card_id) or CardState(card_id=card_id, deck_id=deck_id)
            for name, value in values.items():
                setattr(row, name, to_db_time(value) if isinstance(value, datetime) else value)
            session.add(row)

    def restore_flags(self, card_id: str, deck_id: str, before: StateDict | None) -> None:
        """Undo a bury or suspend: put back the flags of `before` (the card's state read just
        before it); a row that only existed for the flag is removed again."""
        with self.db.unit() as session:
            row = session.get(CardState, card_id)
            if row is None:
                return
            if before is None and row.state is None and not row.leech:
                session.delete(row)
                return
            before = before or {}
            row.suspended = bool(before.get("suspended") or False)
            row.buried_until = to_db_time(before.get("buried_until"))
            session.add(row)

    def set_suspended(self, card_id: str, deck_id: str, suspended: bool = True) -> None:
        self._upsert_flags(card_id, deck_id, suspended=suspended)

    def set_buried(self, card_id: str, deck_id: str, until: datetime | None) -> None:
        self._upsert_flags(card_id, deck_id, buried_until=until)

    def reset_schedule(self, card_id: str) -> bool:
        """Make the card new again (FSRS state, lapses, leech flag and introduction cleared); the
        review log is kept, and so is a suspension. False when it had no schedule."""
        with self.db.unit() as session:
            state = session.get(CardState, card_id)
            if state is None:
                return False
            for name in _SCHEDULE_FIELDS:
                setattr(state, name, None)
            state.reps = 0
            state.lapses = 0
            state.leech = False
            session.add(state)
            return True

    def stabilities(self) -> dict[str, float]:
        """Card id -> FSRS stability in days, for every card reviewed at least once."""
        with self.db.unit() as session:
            rows = session.exec(
                select(CardState.card_id, CardState.stability).where(
                    col(CardState.stability).is_not(None)
                )
            ).all()
        return {card_id: float(stability) for card_id, stability in rows}

    def unreviewed_since_reset(self) -> set[str]:
        """Ids of the cards new now (a card_state row without a state) that have logged
        reviews: each was reset after its last one (reset_schedule keeps the log). Read raw,
        as log_read is: one damaged row never fails the query."""
        query = (
            f"SELECT DISTINCT s.card_id FROM {CardState.__tablename__} AS s "
            f"JOIN {ReviewLog.__tablename__} AS r ON r.card_id = s.card_id "
            "WHERE s.state IS NULL"
        )
        with self.db.unit() as session:
            result = session.connection().exec_driver_sql(query)
            return {card_id for (card_id,) in result if isinstance(card_id, str)}

    def answer_seconds(self, card_ids: Iterable[str]) -> dict[str, float]:
        """Each card's measured answer time: the median of its timed reviews (duration_ms > 0)
        in seconds, clamped (storage.snapshot.answer_seconds_median); cards without a timed
        review are left out."""
        wanted = list(dict.fromkeys(card_ids))
        durations: dict[str, list[int]] = {}
        with self.db.unit() as session:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                query = (
                    f"SELECT card_id, duration_ms FROM {ReviewLog.__tablename__} WHERE {TIMED} "
                    f"AND card_id IN ({', '.join('?' * len(chunk))})"
                )
                for card_id, duration in session.connection().exec_driver_sql(query, tuple(chunk)):
                    durations.setdefault(card_id, []).append(duration)
        return {
            card_id: seconds
            for card_id, found in durations.items()
            if (seconds := answer_seconds_median(found)) is not None
        }

    def typical_answer_seconds(self) -> float | None:
        """The median answer time of the newest timed reviews (as Snapshot.typical_answer_s);
        None with fewer than TYPICAL_MINIMUM."""
        with self.db.unit() as session:
            found = [value for (value,) in session.connection().exec_driver_sql(NEWEST_TIMED)]
        return answer_seconds_median(found, TYPICAL_MINIMUM)

    def log_read(self) -> LogRead:
        """Every review_log row, oldest first (by time, then id). Rows holding values drill
        never writes (storage.domains: a rating 7, an unparsable or absurd time) are left out
        and counted in `skipped`, so one bad row never stops an export or a fit. Read raw: the
        ORM would fail the whole query on one unparsable time."""
        query = (
            "SELECT id, card_id, deck_id, reviewed_at, rating, state_before, state_after, "
            f"duration_ms FROM {ReviewLog.__tablename__} ORDER BY reviewed_at, id"
        )
        with self.db.unit() as session:
            result = session.connection().exec_driver_sql(query)
            names = list(result.keys())
            raw = [dict(zip(names, values, strict=True)) for values in result]
        rows: list[LogRow] = []
        skipped: list[int] = []
        for row in raw:
            if review_log_problems(row):
                skipped.append(row["id"])
                continue
            rows.append(
                LogRow(
                    row["card_id"], row["deck_id"], parse_time(row["reviewed_at"], "reviewed_at"),
                    row["rating"], row["state_before"], row["state_after"], row["duration_ms"],
                )
            )  # fmt: skip
        rows.sort(key=lambda r: r.reviewed_at)  # stable: ties keep id order
        return LogRead(rows, skipped)
