"""`replaces:`: the history of replaced ids moves to the replacing card once, in one
transaction; a replacing card with state of its own keeps it and the clash is reported."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.db import Database, open_database
from storage.history_merge import merge_replaced

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def review(db: Database, card_id: str, at: datetime, reps: int = 1) -> None:
    def schedule(before: dict | None) -> dict:
        return {"state": 2, "due": at + timedelta(days=3), "last_review": at,
                "stability": 3.0, "difficulty": 5.0, "reps": reps}  # fmt: skip

    db.review.record_review(card_id, "old-deck", 3, at, 100, "h", schedule)


def table(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_history_moves_once_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    db = open_database(path)
    review(db, "old-a", T0)
    review(db, "old-b", T0 + timedelta(days=1), reps=7)  # the most recent one gives the state
    review(db, "untouched", T0)
    report = merge_replaced(db, {"new": ("new-deck", ["old-a", "old-b", "never-seen"])})
    assert sorted(report.moved) == [("old-a", "new"), ("old-b", "new")]
    assert report.conflicts == []
    assert table(path, "SELECT card_id, deck_id, reps FROM card_state ORDER BY card_id") == [
        ("new", "new-deck", 7),
        ("untouched", "old-deck", 1),
    ]
    assert table(path, "SELECT card_id, deck_id FROM review_log ORDER BY id") == [
        ("new", "new-deck"),
        ("new", "new-deck"),
        ("untouched", "old-deck"),
    ]
    again = merge_replaced(db, {"new": ("new-deck", ["old-a", "old-b"])})
    assert again.moved == [] and again.conflicts == []
    assert table(path, "SELECT COUNT(*) FROM review_log WHERE card_id = 'new'") == [(2,)]
    db.close()


def test_a_replacing_card_with_state_keeps_it_and_reports(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    db = open_database(path)
    review(db, "old", T0)
    review(db, "new", T0, reps=3)
    report = merge_replaced(db, {"new": ("deck", ["old"])})
    assert report.moved == [] and report.conflicts == [("old", "new")]
    assert table(path, "SELECT card_id, reps FROM card_state ORDER BY card_id") == [
        ("new", 3),
        ("old", 1),
    ]
    db.close()


def test_v3_database_gets_the_leech_column(tmp_path: Path) -> None:
    from storage.migrations import LATEST_VERSION, migrate
    from storage.snapshot import read_snapshot

    path = tmp_path / "v3.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=3)
    conn.execute(
        "INSERT INTO card_state (card_id, deck_id, state, stability, difficulty, due, reps, "
        "lapses, suspended) VALUES ('alpha', 'basics', 2, 3.0, 5.0, "
        "'2026-03-05 12:00:00.000000', 4, 9, 0)"
    )
    conn.close()
    db = open_database(path)
    state = db.review.card_state("alpha")
    assert state is not None and state["leech"] is False and state["lapses"] == 9
    db.close()
    assert table(path, "PRAGMA user_version") == [(LATEST_VERSION,)]
    snapshot = read_snapshot(path)
    assert snapshot is not None and snapshot.schedules["alpha"].leech is False
