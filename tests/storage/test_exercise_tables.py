"""Schema v5 adds the exercise tables: a v4 database migrates with its rows kept and then stores
exercise progress and attempts."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import select

from storage.db import open_database
from storage.exercise_tables import ExerciseAttempt, ExerciseProgress
from storage.integrity import _schema, expected_schema
from storage.migrations import LATEST_VERSION, migrate

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_a_v4_database_gets_the_exercise_tables_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v4.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=4)
    conn.execute(
        "INSERT INTO card_state (card_id, deck_id, state, due, reps, lapses, suspended) "
        "VALUES ('alpha', 'basics', 2, '2026-03-05 12:00:00.000000', 1, 0, 0)"
    )
    assert "exercise_progress" not in _schema(conn)
    conn.close()
    db = open_database(path)
    assert db.card_state("alpha") is not None
    with db.session() as session:
        session.add(ExerciseProgress(name="ddp-by-hand", started_at=T0, hints_shown=1))
        attempt = ExerciseAttempt(
            name="ddp-by-hand", checked_at=T0, status="failed", passed=0, total=2,
            duration_s=6.5, failed_json="[]", run_dir="/r",
        )  # fmt: skip
        session.add(attempt)
    with db.session() as session:
        assert session.exec(select(ExerciseProgress)).one().hints_shown == 1
        assert session.exec(select(ExerciseAttempt)).one().status == "failed"
    db.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION == 5
    assert _schema(conn) == expected_schema(LATEST_VERSION)
