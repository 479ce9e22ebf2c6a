"""The hot read paths never scan the review log (issue 40: a million reviews): every statement
they run is captured as SQLite executes it (a trace callback on each connection) and its
`EXPLAIN QUERY PLAN` must reach review_log through an index or the rowid."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage import stats_queries
from storage.db import Database, open_database
from storage.schema_names import REVIEW_LOG
from storage.snapshot import read_snapshot

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _traced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement run on a connection opened from now on, parameters bound."""
    seen: list[str] = []
    real = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real(*args, **kwargs)  # type: ignore[arg-type]
        conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", connect)  # what SQLAlchemy calls
    return seen


def _fill(db: Database, cards: int = 30, reviews_each: int = 4) -> None:
    def schedule(before: object) -> dict[str, object]:
        due = T0 + timedelta(days=3)
        return {"state": 2, "step": None, "stability": 3.0, "difficulty": 5.0, "due": due,
                "last_review": T0, "reps": 1, "lapses": 0}  # fmt: skip

    for c in range(cards):
        for r in range(reviews_each):
            when = T0 + timedelta(minutes=c * reviews_each + r)
            db.review.record_review(f"c{c}", "deck", 3, when, 4000 if r else 0, "h", schedule)


def _review_log_scans(conn: sqlite3.Connection, statement: str) -> list[str]:
    """The plan's lines that read review_log (or its alias) without an index or the rowid."""
    names = {REVIEW_LOG} | set(re.findall(rf"{REVIEW_LOG}\s+(?:AS\s+)?(\w+)", statement, re.I))
    names -= {"WHERE", "ORDER", "GROUP", "JOIN", "LIMIT", "ON", "USING"}
    plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
    return [
        line
        for line in plan
        if line.split(" ")[0] == "SCAN"
        and line.split(" ")[1] in names
        and " USING " not in line  # an index (covering or not) or the INTEGER PRIMARY KEY
    ]


def _hot_reads(db: Database, path: Path) -> list[Callable[[], object]]:
    def stats_totals() -> object:
        with stats_queries.read_only(path) as conn:
            assert conn is not None
            return stats_queries.review_totals(conn, path, 0)

    return [
        lambda: read_snapshot(path),  # every first paint: schedules, plan, typical answer time
        db.review.typical_answer_seconds,
        lambda: db.review.answer_seconds([f"c{c}" for c in range(10)]),  # the session's pace
        db.review.unreviewed_since_reset,
        lambda: db.review.card_state("c1"),  # every rating reads the card, then writes
        lambda: db.review.reviews("c1"),  # a card's history (browser, card info)
        stats_totals,  # the stats screen (incremental: only rows after the last seen id)
    ]


def test_the_hot_reads_reach_the_review_log_through_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    _fill(db)
    seen = _traced(monkeypatch)
    db.close()
    db = open_database(path)  # its connections are traced now
    try:
        for read in _hot_reads(db, path):
            read()
    finally:
        db.close()
    statements = [s for s in seen if REVIEW_LOG in s and s.lstrip().upper().startswith("SELECT")]
    assert any("duration_ms" in s and "LIMIT" in s for s in statements)  # the snapshot's read
    assert any(" IN (" in s for s in statements)  # answer_seconds
    conn = sqlite3.connect(path)
    try:
        scans = {s: found for s in statements if (found := _review_log_scans(conn, s))}
    finally:
        conn.close()
    assert scans == {}


def test_a_plain_scan_of_the_review_log_is_caught(tmp_path: Path) -> None:
    # the check above can fail: the same query without the partial indexes scans the table
    from storage.snapshot import NEWEST_TIMED

    path = tmp_path / "drill.sqlite3"
    open_database(path).close()
    with sqlite3.connect(path) as conn:
        assert _review_log_scans(conn, NEWEST_TIMED) == []
    conn.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"DROP INDEX ix_{REVIEW_LOG}_timed_newest")
        conn.execute(f"DROP INDEX ix_{REVIEW_LOG}_timed")
    conn.close()
    conn = sqlite3.connect(path)
    try:
        assert _review_log_scans(conn, NEWEST_TIMED) == [f"SCAN {REVIEW_LOG}"]
    finally:
        conn.close()
