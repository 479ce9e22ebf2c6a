"""Two drills opening a new database at once: the switch to WAL can meet the other process's
lock and SQLite may answer "database is locked" at once, not through the busy handler (seen in
a clean-clone CI run of test_db's two-process test, and 4 times in 30 by hand). migrate_file
tries the switch again within the busy timeout."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from storage import migrations
from storage.errors import DatabaseError


class _LockedOnce(sqlite3.Connection):
    """A connection whose first switch to WAL finds the file locked, as the racing process
    leaves it."""

    refusals = 1

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
        if "journal_mode = WAL" in sql and _LockedOnce.refusals > 0:
            _LockedOnce.refusals -= 1
            raise sqlite3.OperationalError("database is locked")
        return super().execute(sql, *args)


@pytest.fixture
def locked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sqlite3.connect
    _LockedOnce.refusals = 1
    monkeypatch.setattr(
        migrations.sqlite3, "connect", lambda *a, **k: real(*a, factory=_LockedOnce, **k)
    )
    monkeypatch.setattr(migrations.time, "sleep", lambda _s: None)  # the pause between tries


def test_a_locked_wal_switch_is_tried_again(tmp_path: Path, locked_once: None) -> None:
    path = tmp_path / "drill.sqlite3"
    assert migrations.migrate_file(path) == 0
    assert _LockedOnce.refusals == 0  # the lock was met, and passed
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST_VERSION


def test_a_lock_that_outlasts_the_busy_timeout_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, locked_once: None
) -> None:
    _LockedOnce.refusals = 10**6
    ticks = iter(range(10**6))
    monkeypatch.setattr(migrations.time, "monotonic", lambda: float(next(ticks)))
    with pytest.raises(DatabaseError, match="database is locked"):
        migrations.migrate_file(tmp_path / "drill.sqlite3")


class _DiskError(sqlite3.Connection):
    tries = 0

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
        if "journal_mode = WAL" in sql:
            _DiskError.tries += 1
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


def test_another_error_is_not_tried_again(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite3", isolation_level=None, factory=_DiskError)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        migrations._switch_to_wal(conn, pause=lambda _s: None)
    assert _DiskError.tries == 1
