"""A full disk and a read-only file system name their cause (issue 25, item 10).

Two ways to run out of room: SQLite's own `max_page_count` on the app's connections (in process,
no privileges needed: SQLite then fails exactly as on a full disk, SQLITE_FULL), and a real tiny
tmpfs mounted in a private user and mount namespace (`unshare -rm`; skipped where the kernel
does not allow one), where `drill` runs as a real process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import event

from storage.db import DatabaseError, open_database

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 2, 12, tzinfo=UTC)


def schedule(before: dict | None) -> dict:
    return {"state": 2, "due": T0 + timedelta(days=3), "stability": 3.0, "difficulty": 5.0,
            "reps": (before or {}).get("reps", 0) + 1}  # fmt: skip


def test_a_write_on_a_full_database_says_cannot_write_and_why(tmp_path: Path) -> None:
    db = open_database(tmp_path / "drill.sqlite3")

    @event.listens_for(db.engine, "connect")
    def _cap(dbapi_connection: object, _record: object) -> None:
        pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[attr-defined]
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 2}")  # type: ignore[attr-defined]

    db.engine.dispose()  # new connections get the cap
    with pytest.raises(DatabaseError) as caught:
        for i in range(5000):
            db.review.record_review(f"card-{i}" * 20, "deck", 3, T0, 10, "h" * 40, schedule)
    db.close()
    message = str(caught.value)
    assert message.startswith(f"cannot write the database {tmp_path / 'drill.sqlite3'}: ")
    assert "database or disk is full" in message
    assert "cannot read" not in message and "\n" not in message


def _unshare_available() -> bool:
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=8k tmpfs /mnt || exit 1"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(
    not _unshare_available(), reason="no private mount namespace (unshare -rm) here"
)


def _in_tiny_disk(tmp_path: Path, size: str, script: str) -> subprocess.CompletedProcess[str]:
    """Run `script` (sh) with $DISK a fresh tmpfs of `size` and DRILL_HOME on it."""
    disk = tmp_path / "disk"
    disk.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "DRILL_DEBUG"}
    env.update(DISK=str(disk), DRILL_HOME=str(disk), PYTHONPATH=str(ROOT), PY=sys.executable)
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size={size} tmpfs "$DISK" && {script}'],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@needs_tmpfs
@pytest.mark.parametrize("size", ["4k", "16k", "64k"])
def test_first_start_on_a_full_disk_names_the_full_disk(tmp_path: Path, size: str) -> None:
    done = _in_tiny_disk(tmp_path, size, '"$PY" -m drill cards')
    assert done.returncode == 2, done.stderr
    err = done.stderr
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "full" in err, err
    assert "cannot rollback" not in err and "cannot read" not in err, err


@needs_tmpfs
def test_a_rating_that_cannot_be_written_is_not_called_unreadable(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """\
        from datetime import UTC, datetime, timedelta
        from pathlib import Path
        import os
        from storage.db import DatabaseError, open_database
        T0 = datetime(2026, 3, 2, 12, tzinfo=UTC)
        db = open_database(Path(os.environ["DISK"]) / "drill.sqlite3")
        fd = os.open(Path(os.environ["DISK"]) / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            os.close(fd)
        try:
            for i in range(200):
                db.review.record_review(f"c{i}" * 50, "d", 3, T0, 10, "h" * 40, lambda b: {
                    "state": 2, "due": T0 + timedelta(days=1), "stability": 3.0,
                    "difficulty": 5.0})
        except DatabaseError as error:
            print(error)
        """
    )
    done = _in_tiny_disk(tmp_path, "512k", f'"$PY" -c {_quote(script)}')
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("cannot write the database "), done.stdout + done.stderr
    assert "full" in line and "cannot read" not in line


@needs_tmpfs
def test_db_backup_into_a_read_only_home_is_one_line_exit_2(tmp_path: Path) -> None:
    script = (
        '"$PY" -c "from storage.db import open_database; from pathlib import Path; import os; '
        "open_database(Path(os.environ['DISK']) / 'drill.sqlite3').close()\" && "
        'mount -o remount,ro "$DISK" && "$PY" -m drill db backup'
    )
    done = _in_tiny_disk(tmp_path, "1m", script)
    assert done.returncode == 2, done.stderr
    err = done.stderr
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("drill: error: cannot write ") and "Read-only file system" in err, err


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
