"""Problems of the user's environment end in one line and exit 2, naming the cause (issue 25,
items 10 and 11): DRILL_HOME that is a file (or sits under one), a file-system error no
command caught, `db backup` of a damaged database (no backup that looks fine is written),
`db check` listing values outside their domains."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

import drill.cli.main as cli_main
from drill.paths import database_path
from storage.db import open_database
from tests.support.db_damage import corrupt_middle


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("argv", [["db", "backup"], ["db", "check"], ["cards"], ["due"],
                                  ["export", "csv", "out.csv"], ["stats"]])  # fmt: skip
@pytest.mark.parametrize("under", [False, True], ids=["a-file", "under-a-file"])
def test_drill_home_that_is_a_file_is_one_line_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    under: bool,
) -> None:
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    home = afile / "drill" if under else afile
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert cli_main.main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith(f"drill: error: DRILL_HOME {home} is not a directory"), line
    assert afile.read_text() == "x"


def test_a_file_system_error_no_command_caught_is_exit_2_naming_the_cause(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(_args: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", "/somewhere/drill.sqlite3")

    monkeypatch.setattr(cli_main, "cmd_due", refuse)
    assert cli_main.main(["due"]) == 2
    assert _one_line(capsys) == "drill: error: /somewhere/drill.sqlite3: Permission denied"


def _damaged_database() -> Path:
    path = database_path()
    open_database(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_after) VALUES (?, 'd', 3, '2026-03-01 00:00:00', 1, '{}')",
            [(f"card-{i}" * 20,) for i in range(3000)],
        )
    conn.close()
    corrupt_middle(path)
    return path


def test_db_backup_of_a_damaged_database_says_so_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _damaged_database()
    out = tmp_path / "backup.sqlite3"
    assert cli_main.main(["db", "backup", str(out)]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"drill: error: the database {path} is damaged ("), line
    assert line.endswith("no backup written (see: drill db check, drill db restore)")
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".backup")]


def test_db_check_lists_values_outside_their_domains_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = database_path()
    open_database(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO card_state (card_id, deck_id, state, due, reps, lapses, suspended) "
            "VALUES ('alpha', 'basics', 99, '2026-03-05 12:00:00', 1, 0, 0)"
        )
    conn.close()
    assert cli_main.main(["db", "check"]) == 1
    out = capsys.readouterr().out
    assert f"{path}: values: card_state card 'alpha': state 99 is not one of 1, 2, 3" in out


def test_due_skips_a_damaged_card_and_says_so(
    deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = database_path()
    open_database(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO card_state (card_id, deck_id, state, due, reps, lapses, suspended) "
            "VALUES ('alpha', 'basics', 99, '2026-03-05 12:00:00', 1, 0, 0)"
        )
    conn.close()
    assert cli_main.main(["due", "--decks", str(deck_dir)]) == 0
    captured = capsys.readouterr()
    (basics,) = [line for line in captured.out.splitlines() if line.startswith("basics ")]
    assert basics.split()[1:3] == ["due", "0"]  # alpha (due 2026-03-05) is skipped, not due
    assert captured.err.startswith("drill: 1 card(s) skipped: their stored schedule holds")
