"""The headless CLI: --version, decks list/check, due --json, errors as one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drill import __version__
from drill.cli.main import main
from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.session import ReviewSession
from storage.db import open_database


def run_drill(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drill", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_version() -> None:
    done = run_drill("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"drill {__version__}")


def test_unknown_subcommand_is_one_line_exit_2() -> None:
    done = run_drill("frobnicate")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid choice: 'frobnicate'" in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["due", "\x1b[31mRED\x1b]0;title\x07"],  # unrecognized arguments: quoted raw by argparse
        ["due", "--json=\x1b[2J"],
        ["lab", "run", "resume", "--world-size", "\x9b2J"],
        ["due", "two\nlines\x1b[A"],
    ],
)
def test_argparse_errors_show_the_command_line_as_text(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith("--help')\n") and err.count("\n") == 1  # one line
    assert not any((ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0 for c in err), ascii(err)


def test_help_explains_commands() -> None:
    done = run_drill("--help")
    assert done.returncode == 0
    for word in ("decks", "due", "DRILL_HOME", "DRILL_DECKS", "--decks"):
        assert word in done.stdout


def test_missing_deck_dir_is_one_line_exit_2(tmp_path: Path) -> None:
    done = run_drill("--decks", str(tmp_path / "nowhere"), "due")
    assert done.returncode == 2
    assert done.stderr == f"drill: error: deck directory not found: {tmp_path / 'nowhere'}\n"


def test_decks_check_clean_exits_0_with_summary(
    deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decks", "check", str(deck_dir)]) == 0
    assert capsys.readouterr().out == "ok: 1 deck(s), 3 card(s), no problems\n"


def test_decks_check_reports_problems_and_exits_1(
    deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = deck_dir / "bad.yaml"
    bad.write_text("deck: bad\ntitle: Bad\ncards:\n  - id: x\n    level: easy\n    front: Q\n")
    assert main(["decks", "check", str(deck_dir)]) == 1
    out = capsys.readouterr()
    assert out.out == f"{bad}:4: card x: missing field 'back'\n"
    assert out.err == "1 problem(s) in 1 file(s)\n"


def test_decks_check_without_paths_checks_bundled_and_user_decks(
    deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decks", "check", "--decks", str(deck_dir)]) == 0
    bundled = len(load_decks().decks)
    assert capsys.readouterr().out.startswith(f"ok: {bundled + 1} deck(s)")


def test_decks_list(deck_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--decks", str(deck_dir), "decks", "list"]) == 0
    assert any(
        line.startswith("basics") and "3 cards" in line
        for line in capsys.readouterr().out.splitlines()
    )


def test_due_json_shape_and_counts(deck_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env_decks = ["--decks", str(deck_dir)]
    decks, db = load_decks(env_decks[1:]), open_database(database_path())
    session = ReviewSession(decks, db, deck_id="basics")
    assert session.current is not None and session.current.card.id == "alpha"
    session.rate(4, 10)
    assert main(["due", "--json", *env_decks]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"decks", "totals"}
    basics = next(d for d in payload["decks"] if d["deck"] == "basics")
    assert basics["due"] == 0 and basics["new"] == 2
    assert isinstance(basics["next_due"], str)
    assert all(isinstance(d["due"], int) and isinstance(d["new"], int) for d in payload["decks"])
    assert payload["totals"]["due"] == sum(d["due"] for d in payload["decks"])
    assert payload["totals"]["new"] == 19  # 20 per day, one introduced today


def test_bad_settings_file_is_one_line(drill_home: Path) -> None:
    drill_home.mkdir(parents=True, exist_ok=True)
    (drill_home / "settings.toml").write_text("desired_retention = 2\n")
    done = run_drill("due")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"drill: error: {drill_home / 'settings.toml'}: desired_retention must be between "
        "0.7 and 0.99"
    ]


def test_settings_change_the_daily_new_limit(
    drill_home: Path, deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drill_home.mkdir(parents=True, exist_ok=True)
    (drill_home / "settings.toml").write_text("new_cards_per_day = 2\n")
    assert main(["due", "--json", "--decks", str(deck_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["new"] == 2


def test_corrupt_database_is_one_line_exit_2(drill_home: Path) -> None:
    drill_home.mkdir(parents=True, exist_ok=True)
    (drill_home / "drill.sqlite3").write_bytes(b"this is not a database" * 100)
    done = run_drill("due")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("drill: error: cannot open database") and "not a database" in line


def test_a_broken_subcommand_module_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    # a broken module must not silently remove its command (`drill lab` gone, no error)
    from drill.cli import lab
    from drill.cli.main import build_parser

    def broken(subparsers: object) -> None:
        raise RuntimeError("lab registration is broken")

    monkeypatch.setattr(lab, "register", broken)
    with pytest.raises(RuntimeError, match="lab registration is broken"):
        build_parser()


def test_subcommands_are_registered_by_plain_imports() -> None:
    from drill.cli.main import build_parser

    help_text = build_parser().format_help()
    for command in ("lab", "mock", "verify", "decks", "due"):
        assert command in help_text
