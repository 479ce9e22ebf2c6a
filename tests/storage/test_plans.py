"""Schema v7: the interview plan (`drill plan`). A v6 database migrates and keeps its rows; the
plan history is append-only (the newest row in force, --clear an ended row); a damaged row is
not in force, is reported by `db check` and does not stop a restore; the light reader and the
repository agree on the plan and on measured answer times."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from storage.backup import restore_database
from storage.db import open_database
from storage.integrity import VALUES, _schema, check_database, expected_schema, validate_database
from storage.migrations import LATEST_VERSION, migrate
from storage.snapshot import PlanRow, read_snapshot

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
DAY = date(2026, 3, 12)


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def test_a_v6_database_gets_the_plan_table_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v6.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=6)
    conn.executescript(
        """
        INSERT INTO card_state (card_id, deck_id, state, stability, difficulty, due, reps,
            lapses, suspended, introduced_at, leech)
            VALUES ('alpha', 'basics', 2, 3.0, 5.0, '2026-03-05 12:00:00.000000', 1, 0, 0,
                    '2026-03-02 12:00:00.000000', 0);
        INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, state_after)
            VALUES ('alpha', 'basics', 3, '2026-03-02 12:00:00.000000', 4000, '{}');
        INSERT INTO run_log (kind, name, params_json, world_size, started_at, status,
            summary_json, run_dir) VALUES ('lab', 'resume', '{}', 2,
            '2026-03-02 13:00:00.000000', 'ok', '{}', '/runs/resume-1');
        """
    )
    conn.close()
    assert read_snapshot(path) is None  # an old schema is the slow path's

    db = open_database(path)
    assert db.plans.current() is None and db.plans.history() == []
    assert [r.rating for r in db.review.reviews("alpha")] == [3]
    assert [r.name for r in db.runs.find()] == ["resume"]
    db.plans.record(DAY, "training-infra", 45, 0.9, T0)
    db.close()

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION == 8
    assert _schema(conn) == expected_schema(LATEST_VERSION)
    conn.close()
    snapshot = read_snapshot(path)
    assert snapshot is not None and snapshot.plan == PlanRow(DAY, "training-infra", 45, 0.9, T0)
    assert snapshot.schedules["alpha"].stability == 3.0
    assert check_database(path) == (LATEST_VERSION, [])


def test_every_change_is_a_new_row_and_the_newest_is_in_force(tmp_path: Path) -> None:
    db = open_database(tmp_path / "drill.sqlite3")
    first = db.plans.record(DAY, "training-infra", 45, 0.9, T0)
    later = T0 + timedelta(days=2)
    second = db.plans.record(DAY + timedelta(days=3), "research-engineer", 60, 0.9, later)
    assert first == PlanRow(DAY, "training-infra", 45, 0.9, T0)
    assert db.plans.current() == second
    assert db.plans.history() == [(first, False), (second, False)]
    assert read_snapshot(db.path).plan == second  # type: ignore[union-attr]

    assert db.plans.end(later + timedelta(hours=1)) is True
    assert db.plans.current() is None
    assert read_snapshot(db.path).plan is None  # type: ignore[union-attr]
    history = db.plans.history()
    assert [ended for _, ended in history] == [False, False, True]
    assert history[-1][0].role == "research-engineer"  # the ended row repeats what it ended
    assert db.plans.end(later + timedelta(hours=2)) is False  # nothing in force: nothing written
    assert len(db.plans.history()) == 3

    third = db.plans.record(DAY, "applied-ml", 30, 0.85, later + timedelta(hours=3))
    assert db.plans.current() == third and len(db.plans.history()) == 4
    db.close()


def test_two_drills_recording_at_once_keep_both_rows(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    open_database(path).close()
    dbs = [open_database(path) for _ in range(2)]
    start = threading.Barrier(2)

    def record(index: int) -> None:
        start.wait()
        for n in range(10):
            dbs[index].plans.record(DAY, "training-infra", 30 + index, 0.9, T0 + timedelta(n))

    threads = [threading.Thread(target=record, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    minutes = [plan.minutes_per_day for plan, _ in dbs[0].plans.history()]
    assert sorted(minutes) == [30] * 10 + [31] * 10
    for db in dbs:
        db.close()


@pytest.mark.parametrize(
    ("assignment", "says"),
    [
        ("interview_day = 'next tuesday'", "interview_day 'next tuesday' is not a date"),
        ("interview_day = '2026-02-30'", "interview_day '2026-02-30' is not a date"),
        ("role = x'01'", "role b'\\x01' is not an id"),  # a TEXT column keeps a blob
        ("role = ''", "role '' is not an id"),
        ("minutes_per_day = 0", "minutes_per_day 0 is outside 1..1440"),
        ("minutes_per_day = 2000", "minutes_per_day 2000 is outside 1..1440"),
        ("minutes_per_day = 4.5", "minutes_per_day 4.5 is outside 1..1440"),
        ("target_recall = 0.2", "target_recall 0.2 is outside 0.5..0.99"),
        ("target_recall = 1.5", "target_recall 1.5 is outside 0.5..0.99"),
        ("created_at = 'now'", "created_at 'now' is not a time"),
        ("ended = 7", "ended 7 is not 0 or 1"),
    ],
)
def test_a_damaged_plan_row_is_not_in_force_and_db_check_names_it(
    tmp_path: Path, assignment: str, says: str
) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    db.plans.record(DAY, "training-infra", 45, 0.9, T0)
    _sql(path, f"UPDATE interview_plan SET {assignment}")

    _version, problems = check_database(path)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{VALUES}interview_plan row 1: ")
    assert says in problems[0]
    assert validate_database(path) == LATEST_VERSION  # a restore still accepts it

    assert db.plans.current() is None
    assert says in (db.plans.damaged() or "")
    assert db.plans.history() == []
    snapshot = read_snapshot(path, strict=True)
    assert snapshot is not None and snapshot.plan is None
    assert snapshot.plan_notice is not None and says in snapshot.plan_notice
    assert "\n" not in snapshot.plan_notice and "drill db check" in snapshot.plan_notice
    db.close()


def test_a_sound_row_after_a_damaged_one_is_in_force(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    db.plans.record(DAY, "training-infra", 45, 0.9, T0)
    _sql(path, "UPDATE interview_plan SET interview_day = 'soon'")
    fixed = db.plans.record(DAY, "training-infra", 50, 0.9, T0 + timedelta(hours=1))
    assert db.plans.current() == fixed and db.plans.damaged() is None
    snapshot = read_snapshot(path)
    assert snapshot is not None and snapshot.plan == fixed and snapshot.plan_notice is None
    db.close()


def test_a_backup_with_a_plan_is_restored_with_it(tmp_path: Path) -> None:
    backup = tmp_path / "backup.sqlite3"
    db = open_database(backup)
    plan = db.plans.record(DAY, "biotech-ml", 45, 0.9, T0)
    db.close()
    live = tmp_path / "home" / "drill.sqlite3"
    open_database(live).close()
    restore_database(live, backup, T0)
    db = open_database(live)
    assert db.plans.current() == plan
    db.close()


def _review(path: Path, card_id: str, duration_ms: object) -> None:
    _sql(
        path,
        "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
        f"state_after) VALUES ('{card_id}', 'd', 3, '2026-03-02 12:00:00.000000', "
        f"{duration_ms!s}, '{{}}')",
    )


def test_answer_times_are_the_median_of_timed_reviews_clamped(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    assert db.review.typical_answer_seconds() is None
    assert read_snapshot(path).typical_answer_s is None  # type: ignore[union-attr]
    for card_id, duration in [("a", 4000), ("a", 10000), ("a", 6000), ("b", 0), ("b", 500),
                              ("c", 900_000), ("c", "'slow'"), ("d", 0)]:  # fmt: skip
        _review(path, card_id, duration)

    # a: median 6 s; b: 0 ms is untimed, 0.5 s clamps to 2; c: 900 s clamps to 300; d: untimed
    assert db.review.answer_seconds(["a", "b", "c", "d", "e"]) == {"a": 6.0, "b": 2.0, "c": 300.0}
    # five timed reviews say little: no typical answer time until TYPICAL_MINIMUM (20)
    assert db.review.typical_answer_seconds() is None
    assert read_snapshot(path).typical_answer_s is None  # type: ignore[union-attr]
    for _ in range(15):
        _review(path, "e", 6000)
    # timed: 4000, 10000, 6000, 500, 900000 and 15 x 6000 -> median 6000 ms
    assert db.review.typical_answer_seconds() == 6.0
    assert read_snapshot(path).typical_answer_s == 6.0  # type: ignore[union-attr]
    db.close()


def test_the_typical_answer_time_reads_the_newest_500_reviews(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_after) VALUES ('a', 'd', 3, '2026-03-02 12:00:00.000000', ?, '{}')",
            [(100_000,)] * 600 + [(8000,)] * 500,
        )
    conn.close()
    assert db.review.typical_answer_seconds() == 8.0
    assert read_snapshot(path).typical_answer_s == 8.0  # type: ignore[union-attr]
    db.close()
