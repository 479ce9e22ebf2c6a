"""A damaged database gives storage.errors.DatabaseError with a one-line message, on open and on
every read and write the review uses: never a raw sqlite3 or SQLAlchemy exception."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from storage.db import Database, DatabaseError, open_database
from storage.errors import DatabaseError as StorageErrorsDatabaseError
from storage.snapshot import read_snapshot

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PAGE = 4096


def schedule(before: dict | None) -> dict:
    # what the scheduler always writes for a card in review (storage.domains)
    return {"state": 2, "due": T0 + timedelta(days=1), "stability": 3.0, "difficulty": 5.0,
            "reps": (before or {}).get("reps", 0) + 1}  # fmt: skip


def _real_database(path: Path, reviews: int = 600) -> None:
    """A drill database (schema by open_database) holding `reviews` reviews over 200 cards."""
    open_database(path).close()
    conn = sqlite3.connect(path)
    stamp = "2026-03-02 12:00:00.000000"
    conn.executemany(
        "INSERT INTO card_state (card_id, deck_id, state, stability, difficulty, due, reps, "
        "lapses, suspended, content_hash, introduced_at) "
        "VALUES (?, 'deck', 2, 3.0, 5.0, ?, 1, 0, 0, ?, ?)",
        [(f"card-{i}", stamp, "h" * 40, stamp) for i in range(200)],
    )
    conn.executemany(
        "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
        "state_before, state_after, content_hash) VALUES (?, 'deck', 3, ?, 10, NULL, ?, ?)",
        [(f"card-{i % 200}", stamp, '{"state": 2, "reps": 1}', "h" * 40) for i in range(reviews)],
    )
    conn.commit()
    conn.close()  # the last connection checkpoints the WAL into the file
    assert not path.with_name(path.name + "-wal").exists()


def _garble(path: Path, first_page: int, pages: int) -> None:
    data = bytearray(path.read_bytes())
    data[first_page * PAGE : (first_page + pages) * PAGE] = b"\xa5" * (pages * PAGE)
    path.write_bytes(bytes(data))


def _review_calls(db: Database) -> dict[str, Callable[[], Any]]:
    return {
        "card_state": lambda: [db.review.card_state(f"card-{i}") for i in range(200)],
        "reviews": db.review.reviews,
        "record_review": lambda: db.review.record_review(
            "card-7", "deck", 3, T0, 10, "h", schedule
        ),
        "set_buried": lambda: db.review.set_buried("card-8", "deck", T0),
        "run_log": lambda: db.runs.start("lab", "resume", {}, 2, "/r", T0),  # writes every index
        "snapshot": lambda: read_snapshot(db.path, strict=True),
    }


def _assert_one_line(error: BaseException, path: Path) -> None:
    message = str(error)
    assert "\n" not in message and str(path) in message and len(message) < 300, message


def test_the_error_type_is_the_one_in_storage_errors() -> None:
    assert DatabaseError is StorageErrorsDatabaseError


@pytest.mark.parametrize("where", [0.3, 0.5, 0.8])
def test_garbage_in_the_middle_of_the_file_is_a_database_error(
    tmp_path: Path, where: float
) -> None:
    path = tmp_path / "drill.sqlite3"
    _real_database(path)
    pages = path.stat().st_size // PAGE
    assert pages > 50
    _garble(path, int(pages * where), 3)

    try:
        db = open_database(path)
    except DatabaseError as error:  # the damage hit the schema: refused on open
        _assert_one_line(error, path)
        return
    failed = []
    for name, call in _review_calls(db).items():
        try:
            call()
        except DatabaseError as error:
            _assert_one_line(error, path)
            failed.append(name)
    db.close()
    assert failed, "no read noticed the damage"


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    path.write_bytes(b"this is not SQLite\n" * 500)
    with pytest.raises(DatabaseError) as caught:
        open_database(path)
    _assert_one_line(caught.value, path)
    assert "file is not a database" in str(caught.value)
    with pytest.raises(DatabaseError, match="file is not a database"):
        read_snapshot(path, strict=True)
    assert read_snapshot(path) is None  # first paint: take the slow path, which says why


def test_a_garbled_header_after_open_fails_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    _real_database(path, reviews=20)
    db = open_database(path)
    db.close()  # pooled connections closed; the next call opens a new one
    _garble(path, 0, 1)
    with pytest.raises(DatabaseError) as caught:
        db.review.card_state("card-1")
    _assert_one_line(caught.value, path)


@pytest.mark.parametrize(
    ("update", "call"),
    [
        ("UPDATE card_state SET due = 'not a time'", lambda db: db.review.card_state("card-1")),
        ("UPDATE card_state SET due = 'not a time'",
         lambda db: db.review.set_buried("card-1", "d", T0)),
        ("UPDATE card_state SET last_review = x'00ff'",
         lambda db: db.review.record_review("card-1", "d", 3, T0, 10, "h", schedule)),
        ("UPDATE review_log SET state_before = '{not json'", lambda db: db.review.undo_review(2)),
        # (the snapshot skips such a row with a notice: tests/storage/test_domains.py)
    ],
)  # fmt: skip
def test_garbage_in_a_column_is_a_database_error(
    tmp_path: Path, update: str, call: Callable[[Database], Any]
) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    db.review.record_review("card-1", "deck", 3, T0, 10, "h", schedule)
    db.review.record_review("card-1", "deck", 3, T0, 10, "h", schedule)
    conn = sqlite3.connect(path)
    conn.execute(update)
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseError) as caught:
        call(db)
    _assert_one_line(caught.value, path)
    db.close()


def test_an_error_raised_by_the_callers_schedule_passes_unchanged(tmp_path: Path) -> None:
    db = open_database(tmp_path / "drill.sqlite3")

    def bad_schedule(_before: dict | None) -> dict:
        raise ValueError("rating must be 1..4")

    with pytest.raises(ValueError, match=r"rating must be 1\.\.4"):
        db.review.record_review("card-1", "deck", 9, T0, 10, "h", bad_schedule)
    assert db.review.card_state("card-1") is None  # nothing written
    db.close()


def test_a_write_lock_held_past_the_busy_timeout_is_a_database_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import storage.db

    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another copy of drill in the middle of a write
    try:
        with pytest.raises(DatabaseError, match="is busy") as caught:
            db.review.set_suspended("card-1", "deck")
        _assert_one_line(caught.value, path)
    finally:
        other.execute("ROLLBACK")
        other.close()
    db.review.set_suspended("card-1", "deck")  # fine once the lock is gone
    assert db.review.card_state("card-1")["suspended"] is True  # type: ignore[index]
    db.close()
