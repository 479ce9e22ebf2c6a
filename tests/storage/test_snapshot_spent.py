"""Today's minutes spent, read on the light path (storage.snapshot): the review log's measured
answer times between two moments, an untimed answer at the caller's typical time, a row whose
time drill never writes left out (issue 33: the plan's budget counts what was already spent)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.db import open_database
from storage.snapshot import read_snapshot

START = datetime(2026, 3, 10, 4, 0, tzinfo=UTC)  # the learner day's start


def log(path: Path, rows: list[tuple[str, object]]) -> None:
    """review_log rows (reviewed_at as stored, duration_ms)."""
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_before, state_after, content_hash) VALUES ('c', 'd', 3, ?, ?, NULL, '{}', NULL)",
            rows,
        )
    conn.close()


def stored(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


def test_spent_seconds_counts_todays_answers_only(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    open_database(path).close()
    log(path, [
        (stored(START - timedelta(minutes=5)), 60_000),  # yesterday: not today's
        (stored(START + timedelta(hours=1)), 12_000),
        (stored(START + timedelta(hours=2)), 900_000),  # clamped to 300 s
        (stored(START + timedelta(hours=3)), 0),  # untimed: the typical time
        ("not a time", 5_000),  # damaged: left out
        (stored(START + timedelta(hours=9)), 7_000),  # after `until`: not yet
    ])  # fmt: skip
    snapshot = read_snapshot(path, strict=True)
    assert snapshot is not None
    until = START + timedelta(hours=4)
    assert snapshot.spent_seconds(START, until, untimed_s=20.0) == 12.0 + 300.0 + 20.0
    assert snapshot.spent_seconds(START, START + timedelta(hours=10), 20.0) == 339.0
    assert snapshot.spent_seconds(until, until + timedelta(hours=1), 20.0) == 0.0
