"""Schema v6: one run log. A v5 database's lab runs and exercise attempts move into run_log with
the right kind and every column kept; the repository's lifecycle and lookups; `db check` knows the
new table and restore validates it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from storage.backup import restore_database
from storage.db import open_database
from storage.errors import DatabaseError, MissingRow
from storage.integrity import _schema, check_database, expected_schema
from storage.migrations import LATEST_VERSION, migrate
from storage.runs import RunEnd

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _v5_database(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=5)
    conn.executescript(
        """
        INSERT INTO lab_run (id, lab, params_json, world_size, card_id, deck_id, started_at,
            duration_s, status, summary_json, run_dir, predicted, certainty, prediction_right,
            suggested_rating, rating)
            VALUES (7, 'resume', '{"mode": "full"}', 2, 'restart-state', 'dist',
                    '2026-03-02 13:00:00.000000', 4.5, 'ok',
                    '{"status": "ok", "checks_passed": 3, "checks_total": 4, "pid": 123}',
                    '/runs/resume-1', 'clearly higher', 'high', 1, 4, 4);
        INSERT INTO lab_run (id, lab, params_json, world_size, started_at, status, summary_json,
            run_dir) VALUES (8, 'mock-coding', '{}', 2, '2026-03-02 14:00:00.000000', 'failed',
            '{}', '/runs/coding-1');
        INSERT INTO exercise_attempt (name, checked_at, status, passed, total, duration_s,
            failed_json, run_dir) VALUES ('ddp-by-hand', '2026-03-02 15:00:00.000000', 'failed',
            1, 2, 6.5, '["grads_averaged"]', '/runs/check-1');
        INSERT INTO exercise_progress (name, started_at, attempts)
            VALUES ('ddp-by-hand', '2026-03-02 14:59:00.000000', 1);
        """
    )
    conn.close()


def test_a_v5_database_moves_lab_runs_and_exercise_attempts_into_the_run_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v5.sqlite3"
    _v5_database(path)
    db = open_database(path)
    lab, coding, exercise = sorted(db.runs.find(), key=lambda r: r.started_at)
    assert (lab.id, lab.kind, lab.name, lab.params, lab.world_size) == (
        7, "lab", "resume", {"mode": "full"}, 2
    )  # fmt: skip
    assert (lab.card_id, lab.status, lab.duration_s, lab.run_dir) == (
        "restart-state", "ok", 4.5, "/runs/resume-1"
    )  # fmt: skip
    assert (lab.checks_passed, lab.checks_total, lab.pid) == (3, 4, 123)
    assert (lab.predicted, lab.certainty, lab.prediction_right, lab.rating) == (
        "clearly higher", "high", True, 4
    )  # fmt: skip
    assert (coding.kind, coding.name, coding.status) == ("coding", "mock-coding", "failed")
    assert (exercise.kind, exercise.name, exercise.status) == ("exercise", "ddp-by-hand", "failed")
    assert (exercise.checks_passed, exercise.checks_total, exercise.duration_s) == (1, 2, 6.5)
    assert exercise.summary["failed_checks"] == ["grads_averaged"]
    assert exercise.started_at == exercise.finished_at == datetime(2026, 3, 2, 15, tzinfo=UTC)
    assert exercise.id > coding.id  # new ids after the kept lab ids
    progress = db.exercises.get("ddp-by-hand")
    assert progress is not None and progress.attempts == 1
    db.close()
    conn = sqlite3.connect(path)
    assert _schema(conn) == expected_schema(LATEST_VERSION)
    assert "lab_run" not in _schema(conn) and "exercise_attempt" not in _schema(conn)


def test_a_garbage_summary_reads_as_a_database_error(tmp_path: Path) -> None:
    path = tmp_path / "v5.sqlite3"
    _v5_database(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE lab_run SET summary_json = '{not json' WHERE id = 8")
    conn.commit()
    conn.close()
    db = open_database(path)  # the migration copes (no pid, no counts from it)
    assert db.runs.get(7) is not None
    with pytest.raises(DatabaseError, match="see: drill db check"):
        db.runs.get(8)  # moved as it was; reading it says where to look


def test_one_lifecycle_start_finish_close(tmp_path: Path) -> None:
    db = open_database(tmp_path / "db.sqlite3")
    first = db.runs.start("verify", "ddp", {"b": 1, "a": 2}, 2, "/r/1", T0, pid=1, version="v1")
    second = db.runs.start("verify", "ddp", {"a": 2, "b": 1}, 2, "/r/2", T0, pid=1, version="v1")
    db.runs.finish(first, RunEnd("ok", T0, 3.0, {"checks_passed": 1}, 1, 1))
    with pytest.raises(MissingRow):
        db.runs.finish(999, RunEnd("ok", T0, 3.0, {}))
    assert db.runs.running() == [(second, 1)]
    assert db.runs.close_running([first, second], "cancelled", {"error": "gone"}, T0) == 1
    [hit] = db.runs.find(kinds=["verify"], name="ddp", params={"a": 2, "b": 1}, world_size=2,
                         version="v1", statuses=["ok"])  # fmt: skip
    assert (hit.id, hit.duration_s, hit.finished_at) == (first, 3.0, T0)
    assert db.runs.find(kinds=["verify"], version="v2") == []
    with pytest.raises(ValueError, match="unknown run kind"):
        db.runs.start("other", "x", {}, 1, "/r", T0)


def test_db_check_and_restore_know_the_run_log(tmp_path: Path) -> None:
    good = tmp_path / "good.sqlite3"
    open_database(good).close()
    assert check_database(good) == (LATEST_VERSION, [])
    bad = tmp_path / "bad.sqlite3"
    open_database(bad).close()
    conn = sqlite3.connect(bad)
    conn.execute("ALTER TABLE run_log ADD COLUMN extra TEXT")
    conn.commit()
    conn.close()
    version, problems = check_database(bad)
    assert version == LATEST_VERSION and any("table run_log has columns" in p for p in problems)
    live = tmp_path / "live.sqlite3"
    open_database(live).close()
    with pytest.raises(DatabaseError, match="run_log"):
        restore_database(live, bad, T0)
    old = tmp_path / "old.sqlite3"
    _v5_database(old)
    restore_database(live, old, T0)  # a sound v5 file restores and migrates
    db = open_database(live)
    assert {r.kind for r in db.runs.find()} == {"lab", "coding", "exercise"}
    db.close()
