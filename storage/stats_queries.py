"""Read-only aggregate queries for the stats screen and the card browser (stdlib sqlite3).

The aggregation runs inside SQLite (100,000 log rows become a few hundred grouped rows), so
the stats screen stays fast without importing sqlmodel. A review counts as *mature* when the
interval it was scheduled at (state_before: due - last_review) was at least 21 days.
Never writes; a file that cannot be read raises storage.errors.DatabaseError (one line).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from storage.domains import card_state_problems
from storage.errors import DatabaseError, one_line
from storage.schema_names import (
    CARD_STATE,
    MOCK_REPORT,
    MOCK_ROUND,
    REVIEW_LOG,
    RUN_LOG,
)

MATURE_DAYS = 21

# scheduled interval of the state a review started from, in days (NULL for a new card)
_INTERVAL = (
    "julianday(json_extract(state_before, '$.due')) "
    "- julianday(json_extract(state_before, '$.last_review'))"
)
# a custom-study rating of a card that was not due (its schedule kept): the same rule as
# drill.review.review_log.schedule_kept, which the optimizer and the CSV export use. True
# retention leaves such reviews out, as Anki's leaves out filtered-deck reviews.
_KEPT = (
    "CASE WHEN json_valid(state_before) AND json_valid(state_after) THEN "
    "COALESCE(json_extract(state_before, '$.last_review') <> '' "
    "AND json_extract(state_before, '$.last_review') "
    "= json_extract(state_after, '$.last_review'), 0) END"
)


@dataclass(frozen=True, slots=True)
class CardStateRow:
    card_id: str
    deck_id: str
    state: int | None
    due: datetime | None  # aware UTC
    last_review: datetime | None
    lapses: int
    reps: int
    suspended: bool
    buried_until: datetime | None
    leech: bool
    damaged: bool = False  # values drill never writes (storage.domains): shown as suspended


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text + "+00:00") if text else None


@contextmanager
def read_only(db_path: Path) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection, or None when there is no database file yet."""
    if not db_path.exists():
        yield None
        return
    try:
        conn = sqlite3.connect(db_path.resolve().as_uri() + "?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as error:
        raise _unreadable(db_path, error) from None
    try:
        yield conn
    except (sqlite3.Error, ValueError, TypeError) as error:
        raise _unreadable(db_path, error) from None
    finally:
        conn.close()


def _unreadable(db_path: Path, error: BaseException) -> DatabaseError:
    return DatabaseError(
        f"cannot read the database {db_path}: {one_line(error)} (see: drill db check)"
    )


def _shift(minutes: int) -> str:
    return f"{minutes:+d} minutes"


@dataclass
class ReviewTotals:
    """The review log summed up, as far as review id `last_id` (`rows` rows): per (deck, day)
    [reviews, mature reviews, mature rated Again], per card [mature reviews, mature Again]."""

    shift_minutes: int
    last_id: int = 0
    rows: int = 0
    by_deck_day: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    by_card: dict[str, list[int]] = field(default_factory=dict)


_TOTALS: dict[tuple[str, int], ReviewTotals] = {}  # per database file and day shift
_LOCK = threading.Lock()


def review_totals(conn: sqlite3.Connection, db_path: Path, shift_minutes: int) -> ReviewTotals:
    """Sum the review log into ReviewTotals, incrementally: the log only grows (undo deletes
    a row, which the row count up to `last_id` notices, and then everything is summed again).
    Rows re-keyed in place (storage.history_merge) are not noticed; the app merges while it
    loads, before anything can ask for stats. Days are learner's days: `shift_minutes` moves
    UTC onto them. Cached per process, per database file."""
    key = (str(db_path.resolve()), shift_minutes)
    with _LOCK:
        return _review_totals(conn, key, shift_minutes)


def _review_totals(
    conn: sqlite3.Connection, key: tuple[str, int], shift_minutes: int
) -> ReviewTotals:
    totals = _TOTALS.get(key)
    if totals is not None:
        kept = conn.execute(
            f"SELECT COUNT(*) FROM {REVIEW_LOG} WHERE id <= ?", (totals.last_id,)
        ).fetchone()[0]
        if kept != totals.rows:
            totals = None
    if totals is None:
        totals = ReviewTotals(shift_minutes)
    _add_reviews(conn, totals)
    _TOTALS[key] = totals
    return totals


def _add_reviews(conn: sqlite3.Connection, totals: ReviewTotals) -> None:
    # one pass over the new rows (the JSON is parsed once), then two small GROUP BYs
    conn.execute("DROP TABLE IF EXISTS temp.drill_new_reviews")
    conn.execute(
        "CREATE TEMP TABLE drill_new_reviews AS SELECT id, card_id, deck_id, "
        "date(reviewed_at, ?) AS day, rating = 1 AS again, "
        f"COALESCE(CASE WHEN json_valid(state_before) THEN {_INTERVAL} END, 0) >= ? "
        f"AND NOT COALESCE({_KEPT}, 0) AS mature "
        f"FROM {REVIEW_LOG} WHERE id > ?",
        (_shift(totals.shift_minutes), MATURE_DAYS, totals.last_id),
    )
    try:
        last, rows = conn.execute("SELECT MAX(id), COUNT(*) FROM drill_new_reviews").fetchone()
        if not rows:
            return
        deck_days = conn.execute(
            "SELECT deck_id, day, COUNT(*), SUM(mature), SUM(mature AND again) "
            "FROM drill_new_reviews WHERE day IS NOT NULL GROUP BY deck_id, day"
        ).fetchall()
        cards = conn.execute(
            "SELECT card_id, COUNT(*), SUM(again) FROM drill_new_reviews WHERE mature "
            "GROUP BY card_id"
        ).fetchall()
        # merged only once everything was read: a failed read leaves the totals as they were
        for deck, day, n, mature, again in deck_days:
            entry = totals.by_deck_day.setdefault((str(deck), str(day)), [0, 0, 0])
            entry[0] += int(n)
            entry[1] += int(mature or 0)
            entry[2] += int(again or 0)
        for card, mature, again in cards:
            entry = totals.by_card.setdefault(str(card), [0, 0])
            entry[0] += int(mature)
            entry[1] += int(again or 0)
        totals.last_id = int(last)
        totals.rows += int(rows)
    finally:
        conn.execute("DROP TABLE IF EXISTS temp.drill_new_reviews")


def card_states(conn: sqlite3.Connection) -> list[CardStateRow]:
    """Every card_state row. A row holding values drill never writes (storage.domains) reads
    as suspended and `damaged`, with no schedule: shown, never scheduled or counted as due."""
    cursor = conn.execute(f"SELECT * FROM {CARD_STATE}")
    names = [column[0] for column in cursor.description]
    found = []
    for values in cursor:
        row = dict(zip(names, values, strict=True))
        row.setdefault("leech", 0)
        if card_state_problems(row):
            found.append(
                CardStateRow(str(row["card_id"]), str(row["deck_id"]), None, None, None, 0, 0,
                             True, None, False, damaged=True)
            )  # fmt: skip
            continue
        found.append(
            CardStateRow(
                card_id=row["card_id"],
                deck_id=row["deck_id"],
                state=row["state"],
                due=_time(row["due"]),
                last_review=_time(row["last_review"]),
                lapses=row["lapses"],
                reps=row["reps"],
                suspended=bool(row["suspended"]),
                buried_until=_time(row["buried_until"]),
                leech=bool(row["leech"]),
            )
        )
    return found


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return found.fetchone() is not None


def prediction_calibration(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(certainty, predictions, of which right) over lab runs with a judged prediction."""
    if not _has_table(conn, RUN_LOG):
        return []
    rows = conn.execute(
        f"SELECT certainty, COUNT(*), SUM(prediction_right = 1) FROM {RUN_LOG} "
        "WHERE certainty IS NOT NULL AND prediction_right IS NOT NULL GROUP BY certainty"
    ).fetchall()
    return [(str(c), int(n), int(r or 0)) for c, n, r in rows]


def mock_results(conn: sqlite3.Connection) -> list[tuple[datetime, str, float, str]]:
    """(started at, round key, overall score 0..1 or 0..100 as stored, band), oldest first."""
    if not (_has_table(conn, MOCK_REPORT) and _has_table(conn, MOCK_ROUND)):
        return []
    rows = conn.execute(
        f"SELECT r.started_at, r.round_key, p.overall_score, p.overall_band "
        f"FROM {MOCK_REPORT} p JOIN {MOCK_ROUND} r ON r.id = p.round_id ORDER BY r.started_at"
    ).fetchall()
    return [(_time(s), str(k), float(v), str(b)) for s, k, v, b in rows if s]  # type: ignore[misc]


def exercise_results(conn: sqlite3.Connection) -> list[tuple[datetime, str, str, int, int]]:
    """(checked at, exercise name, status, checks passed, checks run) per finished exercise
    check in the run log, oldest first; empty before the run log exists (schema v6)."""
    if not _has_table(conn, RUN_LOG):
        return []
    rows = conn.execute(
        "SELECT COALESCE(finished_at, started_at) AS at, name, status, checks_passed, "
        f"checks_total FROM {RUN_LOG} WHERE kind = 'exercise' "
        "AND status NOT IN ('running', 'cancelled') ORDER BY at, id"
    ).fetchall()
    found = []
    for at, name, status, passed, total in rows:
        try:  # a hand-edited database may hold text where numbers belong: skip that row
            found.append((_time(at), str(name), str(status), int(passed or 0), int(total or 0)))
        except (TypeError, ValueError):
            continue
    return [row for row in found if row[0] is not None]  # type: ignore[misc]


def review_history(conn: sqlite3.Connection, card_id: str) -> list[tuple[datetime, int, int]]:
    """(reviewed at, rating, duration ms) of one card, oldest first."""
    rows = conn.execute(
        f"SELECT reviewed_at, rating, duration_ms FROM {REVIEW_LOG} WHERE card_id = ? ORDER BY id",
        (card_id,),
    ).fetchall()
    return [(_time(t), int(r), int(d)) for t, r, d in rows if t]  # type: ignore[misc]
