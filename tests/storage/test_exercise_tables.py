"""Schema v5 adds the exercise tables: a v4 database migrates with its rows kept and then stores
exercise progress (its checks are runs in the run log since v6)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from storage.db import open_database
from storage.integrity import _schema, expected_schema
from storage.migrations import LATEST_VERSION, migrate

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_a_v4_database_gets_the_exercise_tables_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v4.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=4)
    conn.execute(
        "INSERT INTO card_state (card_id, deck_id, state, stability, difficulty, due, reps, "
        "lapses, suspended) VALUES ('alpha', 'basics', 2, 3.0, 5.0, "
        "'2026-03-05 12:00:00.000000', 1, 0, 0)"
    )
    assert "exercise_progress" not in _schema(conn)
    conn.close()
    db = open_database(path)
    assert db.review.card_state("alpha") is not None
    db.exercises.hint_shown("ddp-by-hand", 1, T0)
    before = db.exercises.checked("ddp-by-hand", "failed", T0)
    assert before is not None and before.attempts == 0
    entry = db.exercises.get("ddp-by-hand")
    assert entry is not None and (entry.hints_shown, entry.attempts) == (1, 1)
    assert entry.last_status == "failed" and entry.solved_at is None
    db.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    assert _schema(conn) == expected_schema(LATEST_VERSION)
