"""Backups with the SQLite backup API: daily automatic ones (7 kept), manual ones, and restore
that validates its file, keeps the current database and replaces it atomically."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage.backup import (
    KEEP,
    auto_backup,
    automatic_backups,
    backup_database,
    backups_dir,
    restore_database,
)
from storage.db import DatabaseError, open_database
from storage.integrity import check_database
from storage.migrations import LATEST_VERSION, migrate

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def schedule(before: dict | None) -> dict:
    # what the scheduler always writes for a card in review (storage.domains)
    return {"state": 2, "due": T0 + timedelta(days=3), "stability": 3.0, "difficulty": 5.0,
            "reps": (before or {}).get("reps", 0) + 1}  # fmt: skip


def cards(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT card_id FROM card_state ORDER BY 1")]
    finally:
        conn.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "drill.sqlite3"
    db = open_database(path)
    db.review.record_review("alpha", "basics", 3, T0, 10, "h", schedule)
    db.close()
    return path


def test_no_database_no_backup(tmp_path: Path) -> None:
    assert auto_backup(tmp_path / "drill.sqlite3", T0) is None
    assert not (tmp_path / "backups").exists()


def test_auto_backup_copies_what_is_committed_even_while_the_wal_holds_it(db_path: Path) -> None:
    db = open_database(db_path)  # stays open: its commit sits in the WAL, not in the file yet
    db.review.record_review("beta", "basics", 3, T0, 10, "h", schedule)
    assert db_path.with_name("drill.sqlite3-wal").stat().st_size > 0
    made = auto_backup(db_path, T0)
    db.close()
    assert made is not None and made.parent == backups_dir(db_path)
    assert made.name == f"drill-{T0.astimezone().strftime('%Y%m%d-%H%M%S')}.sqlite3"
    assert cards(made) == ["alpha", "beta"]
    assert check_database(made) == (LATEST_VERSION, [])
    assert not made.with_name(made.name + "-wal").exists()  # one self-contained file
    assert [p.name for p in backups_dir(db_path).iterdir()] == [made.name]  # no temp file left


def test_at_most_one_automatic_backup_a_day_and_the_last_seven_kept(db_path: Path) -> None:
    first = auto_backup(db_path, T0)
    assert first is not None
    assert auto_backup(db_path, T0 + timedelta(hours=5)) is None  # same day
    manual = backup_database(db_path, None, T0)
    made = [first]
    for day in range(1, 10):
        backup = auto_backup(db_path, T0 + timedelta(days=day))
        assert backup is not None
        made.append(backup)
    assert automatic_backups(db_path) == made[-KEEP:]
    assert KEEP == 7 and not made[0].exists() and manual.exists()  # manual ones are not pruned


def test_a_damaged_database_is_not_backed_up_over_good_backups(db_path: Path) -> None:
    good = auto_backup(db_path, T0)
    assert good is not None
    data = bytearray(db_path.read_bytes())
    data[4096 : 2 * 4096] = b"\xa5" * 4096  # page 2: card_state
    db_path.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="damaged"):
        auto_backup(db_path, T0 + timedelta(days=1))
    assert automatic_backups(db_path) == [good]


def test_manual_backup_to_a_file_a_directory_and_never_over_a_file(
    db_path: Path, tmp_path: Path
) -> None:
    out = tmp_path / "elsewhere" / "copy.sqlite3"
    with pytest.raises(DatabaseError, match=r"copy.sqlite3: no directory .*elsewhere$"):
        backup_database(db_path, out, T0)  # a path given never gets new folders
    assert not out.parent.exists()
    out.parent.mkdir()
    assert backup_database(db_path, out, T0) == out and cards(out) == ["alpha"]
    folder = tmp_path / "folder"
    folder.mkdir()
    into = backup_database(db_path, folder, T0)
    assert into.parent == folder and into.name.endswith("-manual.sqlite3")
    before = out.read_bytes()
    with pytest.raises(DatabaseError, match="already exists"):
        backup_database(db_path, out, T0)
    assert out.read_bytes() == before
    with pytest.raises(DatabaseError, match="no database"):
        backup_database(tmp_path / "none.sqlite3", None, T0)


def test_restore_brings_back_the_backup_and_keeps_the_current_database(
    db_path: Path, tmp_path: Path
) -> None:
    backup = backup_database(db_path, tmp_path / "b.sqlite3", T0)
    db = open_database(db_path)  # another copy of drill has it open during the restore
    db.review.record_review("beta", "basics", 3, T0, 10, "h", schedule)
    saved = restore_database(db_path, backup, T0)
    assert db.review.card_state("beta") is None and db.review.card_state("alpha") is not None
    db.review.record_review("gamma", "basics", 3, T0, 10, "h", schedule)  # still usable afterwards
    db.close()
    assert cards(db_path) == ["alpha", "gamma"]
    assert saved is not None and "before-restore" in saved.name
    assert cards(saved) == ["alpha", "beta"]
    assert check_database(db_path) == (LATEST_VERSION, [])


def test_restore_of_an_older_schema_migrates_it(db_path: Path, tmp_path: Path) -> None:
    old = tmp_path / "v1.sqlite3"
    conn = sqlite3.connect(old, isolation_level=None)
    migrate(conn, target=1)
    conn.execute("INSERT INTO card_state (card_id, deck_id) VALUES ('old', 'basics')")
    conn.close()
    restore_database(db_path, old, T0)
    assert cards(db_path) == ["old"]
    assert check_database(db_path) == (LATEST_VERSION, [])


def _future(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()


def _missing_table(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("DROP TABLE review_log")
    conn.close()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.write_bytes(b"garbage" * 1000), "file is not a database"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(),
         "not a drill database"),
        (_future, "newer than this drill supports"),
        (_missing_table, "table review_log is missing"),
        (lambda p: None, "no such file"),
    ],
)  # fmt: skip
def test_restore_refuses_a_file_that_is_not_a_sound_drill_database(
    db_path: Path,
    tmp_path: Path,
    make,
    reason: str,  # type: ignore[no-untyped-def]
) -> None:
    source = tmp_path / "candidate.sqlite3"
    make(source)
    before = db_path.read_bytes()
    with pytest.raises(DatabaseError, match=reason) as caught:
        restore_database(db_path, source, T0)
    assert "\n" not in str(caught.value)
    assert db_path.read_bytes() == before
    assert not backups_dir(db_path).exists()  # refused before anything was written


def test_restore_over_a_file_that_is_not_a_database(db_path: Path, tmp_path: Path) -> None:
    backup = backup_database(db_path, tmp_path / "b.sqlite3", T0)
    db_path.write_bytes(b"\x00garbage" * 2000)
    db_path.with_name("drill.sqlite3-wal").write_bytes(b"stale wal")
    saved = restore_database(db_path, backup, T0)
    assert cards(db_path) == ["alpha"]
    assert saved is not None and saved.read_bytes() == b"\x00garbage" * 2000  # kept as it was
    assert check_database(db_path) == (LATEST_VERSION, [])


def test_restore_refuses_the_current_database_itself(db_path: Path) -> None:
    with pytest.raises(DatabaseError, match="is the current database"):
        restore_database(db_path, db_path, T0)


def test_restore_of_a_file_with_another_page_size(db_path: Path, tmp_path: Path) -> None:
    source = tmp_path / "small-pages.sqlite3"
    conn = sqlite3.connect(source, isolation_level=None)
    conn.execute("PRAGMA page_size = 1024")
    migrate(conn)
    conn.execute("INSERT INTO card_state (card_id, deck_id) VALUES ('small', 'basics')")
    conn.close()
    restore_database(db_path, source, T0)
    assert cards(db_path) == ["small"]
    assert check_database(db_path) == (LATEST_VERSION, [])
    assert sorted(p.name for p in db_path.parent.iterdir() if p.name.startswith(".")) == []


FOREIGN_OBJECTS = {
    "trigger": "CREATE TRIGGER wipe AFTER INSERT ON review_log BEGIN DELETE FROM review_log; END",
    "view": "CREATE VIEW everything AS SELECT * FROM review_log",
    "table": "CREATE TABLE notes_of_someone (x)",
    "index": "CREATE INDEX extra_index ON review_log (card_id, rating)",
}


@pytest.mark.parametrize("kind", sorted(FOREIGN_OBJECTS))
def test_a_backup_with_objects_drill_never_creates_is_refused_before_the_live_file_changes(
    db_path: Path, tmp_path: Path, kind: str
) -> None:
    backup = backup_database(db_path, tmp_path / "b.sqlite3", T0)
    conn = sqlite3.connect(backup)
    conn.execute(FOREIGN_OBJECTS[kind])
    conn.commit()
    conn.close()
    version, problems = check_database(backup)
    assert version == LATEST_VERSION
    assert [p for p in problems if "is not drill's" in p and kind in p], problems
    before = db_path.read_bytes()
    with pytest.raises(DatabaseError, match="not drill's"):
        restore_database(db_path, backup, T0)
    assert db_path.read_bytes() == before
    assert not (db_path.parent / "backups").exists() or not any(
        "before-restore" in p.name for p in (db_path.parent / "backups").iterdir()
    )


def test_a_negative_schema_version_is_reported_refused_and_never_migrated(
    db_path: Path, tmp_path: Path
) -> None:
    backup = backup_database(db_path, tmp_path / "b.sqlite3", T0)
    conn = sqlite3.connect(backup)
    conn.execute("PRAGMA user_version = -1")
    conn.commit()
    conn.close()
    version, problems = check_database(backup)
    assert version == -1 and any("not one drill writes" in p for p in problems)
    before = db_path.read_bytes()
    with pytest.raises(DatabaseError, match="not one drill writes"):
        restore_database(db_path, backup, T0)
    assert db_path.read_bytes() == before
    with pytest.raises(DatabaseError, match="not one drill writes"):
        open_database(backup)
    assert check_database(backup)[0] == -1  # opening it changed nothing
