"""`drill db check|backup|restore` through drill's own entry point (main), with drill.cli.db
registered as a plug-in the way main.py registers the others."""

from __future__ import annotations

import argparse
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import drill.cli.db as db_cli
import drill.cli.main as cli_main
from drill import paths
from drill.paths import database_path
from storage.backup import backups_dir
from storage.db import open_database
from storage.migrations import LATEST_VERSION, migrate

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def db_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until main.py registers drill.cli.db itself, add it to the parser main() builds."""
    build = cli_main.build_parser

    def build_with_db() -> argparse.ArgumentParser:
        parser = build()
        (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "db" not in sub.choices:
            db_cli.register(sub)
        return parser

    monkeypatch.setattr(cli_main, "build_parser", build_with_db)


def drill(*argv: str) -> int:
    return cli_main.main(list(argv))


def _schedule(before: dict | None) -> dict:
    return {"state": 2, "due": T0 + timedelta(days=3), "stability": 3.0, "difficulty": 5.0,
            "reps": (before or {}).get("reps", 0) + 1}  # fmt: skip


def _database_with(*card_ids: str) -> Path:
    db = open_database(database_path())
    for card_id in card_ids:
        db.review.record_review(card_id, "basics", 3, T0, 10, "h", _schedule)
    db.close()
    return database_path()


def _cards(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT card_id FROM card_state ORDER BY 1")]
    finally:
        conn.close()


def test_check_without_a_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert drill("db", "check") == 0
    assert capsys.readouterr().out == f"ok: no database yet at {database_path()}\n"
    assert not database_path().exists()  # check never creates it


def test_check_a_sound_database(capsys: pytest.CaptureFixture[str]) -> None:
    path = _database_with("alpha")
    assert drill("db", "check") == 0
    assert capsys.readouterr().out == (
        f"ok: {path}: integrity ok, schema version {LATEST_VERSION}\n"
    )


def test_check_an_older_schema_says_it_will_be_migrated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    database_path().parent.mkdir(parents=True)
    conn = sqlite3.connect(database_path(), isolation_level=None)
    migrate(conn, target=2)
    conn.close()
    assert drill("db", "check") == 0
    assert (
        f"schema version 2 (migrated to {LATEST_VERSION} on next open)" in capsys.readouterr().out
    )


def test_check_a_damaged_database_one_line_per_problem(capsys: pytest.CaptureFixture[str]) -> None:
    path = _database_with("alpha", "beta")
    data = bytearray(path.read_bytes())
    data[4096 : 2 * 4096] = b"\xa5" * 4096  # page 2
    path.write_bytes(bytes(data))
    assert drill("db", "check") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith(f"{path}: ") for line in lines)
    assert any("integrity:" in line for line in lines)


def test_check_a_database_from_the_future(capsys: pytest.CaptureFixture[str]) -> None:
    path = _database_with("alpha")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    assert drill("db", "check") == 1
    assert "newer than this drill supports" in capsys.readouterr().out


def test_check_a_file_that_is_not_a_database(capsys: pytest.CaptureFixture[str]) -> None:
    database_path().parent.mkdir(parents=True)
    database_path().write_bytes(b"not a database" * 100)
    assert drill("db", "check") == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert "file is not a database" in line


def test_backup_then_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _database_with("alpha")
    assert drill("db", "backup") == 0
    assert backups_dir(path) == paths.backups_dir()
    (written,) = backups_dir(path).iterdir()
    assert capsys.readouterr().out == f"backed up {path} to {written}\n"
    out = tmp_path / "copy.sqlite3"
    assert drill("db", "backup", str(out)) == 0 and _cards(out) == ["alpha"]
    capsys.readouterr()

    _database_with("beta")
    assert drill("db", "restore", str(out)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"restored {path} from {out}"
    assert lines[1].startswith("the previous database was kept as ")
    kept = Path(lines[1].rsplit(" ", 1)[1])
    assert _cards(path) == ["alpha"] and _cards(kept) == ["alpha", "beta"]


def test_backup_never_overwrites_and_needs_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exists.sqlite3"
    out.write_text("mine")
    assert drill("db", "backup", str(out)) == 2
    assert capsys.readouterr().err == f"drill: error: no database at {database_path()}\n"
    _database_with("alpha")
    assert drill("db", "backup", str(out)) == 2
    assert capsys.readouterr().err == f"drill: error: {out} already exists; not overwriting it\n"
    assert out.read_text() == "mine"


def test_restore_refuses_a_file_that_is_not_a_drill_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _database_with("alpha")
    before = path.read_bytes()
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello\n" * 100)
    assert drill("db", "restore", str(bogus)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"drill: error: {bogus} is not a usable drill")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "expected"),
    [(["db", "restore"], "the following arguments are required: FILE"),
     (["db", "frobnicate"], "invalid choice: 'frobnicate'")],
)  # fmt: skip
def test_usage_errors_are_one_line_exit_2(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        drill(*argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err


def test_db_without_a_subcommand_prints_help_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert drill("db") == 2
    assert "check" in capsys.readouterr().out


def test_check_names_a_time_that_does_not_parse_in_exercise_progress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _database_with("alpha")
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO exercise_progress (name, started_at, attempts, hints_shown, "
            "solution_viewed, last_checked_at) VALUES ('ddp', '2026-03-02 12:00:00.000000', 1, "
            "0, 0, 'last tuesday')"
        )
    conn.close()
    assert drill("db", "check") == 1
    assert capsys.readouterr().out == (
        f"{path}: values: exercise_progress exercise 'ddp': last_checked_at 'last tuesday' is "
        "not a time\n"
    )
