"""SQLite storage: WAL, migrations from an older schema, concurrent writers, snapshot reader."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.db import open_database
from storage.migrations import LATEST_VERSION, MIGRATIONS, migrate
from storage.schema_names import CARD_STATE, CARD_STATE_COLUMNS, REVIEW_LOG, REVIEW_LOG_COLUMNS
from storage.snapshot import read_snapshot
from storage.tables import CardState, ReviewLog

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def schedule_after(before: dict | None) -> dict:
    return {"state": 2, "due": T0 + timedelta(days=3), "stability": 3.0, "difficulty": 5.0,
            "reps": (before or {}).get("reps", 0) + 1}  # fmt: skip


def test_new_database_is_wal_and_latest_schema(tmp_path: Path) -> None:
    db = open_database(tmp_path / "d.sqlite3")
    db.close()
    conn = sqlite3.connect(tmp_path / "d.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    assert columns(conn, CARD_STATE) == list(CARD_STATE_COLUMNS)
    assert columns(conn, REVIEW_LOG) == list(REVIEW_LOG_COLUMNS)


def test_sqlmodel_tables_match_migrated_schema(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.sqlite3", isolation_level=None)
    migrate(conn)
    assert columns(conn, CARD_STATE) == [c.name for c in CardState.__table__.columns]
    assert columns(conn, REVIEW_LOG) == [c.name for c in ReviewLog.__table__.columns]


def test_migration_from_v1_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)
    conn.execute(
        f"INSERT INTO {CARD_STATE} (card_id, deck_id, state, stability, difficulty, due, reps, "
        "lapses, suspended) VALUES ('alpha', 'basics', 2, 3.0, 5.0, '2026-03-05 12:00:00.000000', "
        "1, 0, 0)"
    )
    conn.execute(
        f"INSERT INTO {REVIEW_LOG} (card_id, deck_id, rating, reviewed_at, duration_ms, "
        "state_after) VALUES ('alpha', 'basics', 3, '2026-03-02 12:00:00.000000', 1500, '{}')"
    )
    conn.close()
    assert read_snapshot(path) is None  # the light reader refuses an old schema

    db = open_database(path)
    state = db.review.card_state("alpha")
    assert state is not None and state["due"] == datetime(2026, 3, 5, 12, tzinfo=UTC)
    assert state["introduced_at"] == datetime(2026, 3, 2, 12, tzinfo=UTC)  # backfilled by v2
    (log,) = db.review.reviews("alpha")
    assert (log.rating, log.duration_ms, log.content_hash) == (3, 1500, None)
    db.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION == len(MIGRATIONS)


def test_newer_schema_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    try:
        open_database(path)
    except RuntimeError as error:
        assert "newer than this drill supports" in str(error)
    else:
        raise AssertionError("open_database accepted a schema from the future")


def test_two_connections_write_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    first, second = open_database(path), open_database(path)
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def writer(db, prefix: str) -> None:  # type: ignore[no-untyped-def]
        try:
            start.wait()
            for i in range(40):
                db.review.record_review(f"{prefix}{i % 5}", "d", 3, T0, 100, "h", schedule_after)
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    pairs = ((first, "a"), (second, "b"))
    threads = [threading.Thread(target=writer, args=pair) for pair in pairs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(first.review.reviews()) == 80
    assert first.review.card_state("a0")["reps"] == 8  # type: ignore[index]
    assert second.review.card_state("b4")["reps"] == 8  # type: ignore[index]


def test_undo_restores_state_and_deletes_log_row(tmp_path: Path) -> None:
    db = open_database(tmp_path / "u.sqlite3")
    first = db.review.record_review("alpha", "basics", 3, T0, 10, "h1", schedule_after)
    second = db.review.record_review("alpha", "basics", 3, T0, 10, "h1", schedule_after)
    assert db.review.undo_review(first.log_id) is False  # not the newest review of the card
    assert db.review.undo_review(second.log_id) is True
    assert db.review.card_state("alpha")["reps"] == 1  # type: ignore[index]
    assert [r.id for r in db.review.reviews("alpha")] == [first.log_id]
    assert db.review.undo_review(first.log_id) is True
    assert db.review.card_state("alpha") is None and db.review.reviews() == []


def test_snapshot_reads_what_the_repository_wrote(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    assert read_snapshot(path).schedules == {}  # type: ignore[union-attr]
    assert not path.exists()  # the light reader never creates the file
    db = open_database(path)
    db.review.record_review("alpha", "basics", 3, T0, 10, "h1", schedule_after)
    db.review.set_suspended("beta", "basics")
    db.review.set_buried("gamma", "basics", T0 + timedelta(hours=16))
    snapshot = read_snapshot(path)
    assert snapshot is not None
    alpha, beta, gamma = (snapshot.schedules[c] for c in ("alpha", "beta", "gamma"))
    assert (alpha.state, alpha.due, alpha.content_hash) == (2, T0 + timedelta(days=3), "h1")
    assert alpha.introduced_at == T0
    assert beta.suspended and beta.state is None
    assert gamma.buried_until == T0 + timedelta(hours=16)
    assert snapshot.introduced_since(T0) == 1
    assert snapshot.introduced_since(T0 + timedelta(seconds=1)) == 0


WRITER = """
import sys
from datetime import UTC, datetime
from storage.db import open_database

db = open_database(__import__("pathlib").Path(sys.argv[1]))
for i in range(25):
    db.review.record_review(f"{sys.argv[2]}{i % 3}", "d", 3, datetime.now(UTC), 5, "h",
                     lambda before: {"state": 2, "due": datetime.now(UTC),
                                     "stability": 3.0, "difficulty": 5.0})
print("done", flush=True)
"""


def test_two_processes_create_migrate_and_write_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), prefix],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for prefix in ("p", "q")
    ]
    results = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], results
    db = open_database(path)
    assert len(db.review.reviews()) == 50
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
