"""What an export may write (issue 25, item 3): a regular file or a new path. A directory, a
device, a FIFO, a socket, a symlink to any of those and a dangling symlink are refused with one
line, exit 2, and are left as they were; a symlink to a regular file writes that file and stays
a link; "-" is standard output for CSV and refused for an Anki package. A review-log row holding
values drill never writes is skipped with a notice (item 6)."""

from __future__ import annotations

import csv
import io
import os
import socket
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drill.cli import export
from drill.database import open_app_database
from drill.paths import database_path
from drill.review.scheduler import rate_card
from tests.support.subcommand import drill_main

Main = Callable[[Sequence[str]], int]
MOMENT = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Main:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return drill_main(monkeypatch, export)


@pytest.fixture
def reviewed() -> None:
    db = open_app_database(database_path())
    rate_card(db, "alpha", "basics", 3, content_hash=None, now=MOMENT, duration_ms=1500)
    rate_card(db, "beta", "basics", 2, content_hash=None, now=MOMENT, duration_ms=900)
    db.close()


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def _make_fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def _make_socket(path: Path) -> str:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return "a socket"


def _make_dir(path: Path) -> str:
    path.mkdir()
    return "a directory"


def _make_link_to_null(path: Path) -> str:
    path.symlink_to("/dev/null")
    return "a symlink to a device"


def _make_link_to_dir(path: Path) -> str:
    path.symlink_to(path.parent)
    return "a symlink to a directory"


def _make_dangling_link(path: Path) -> str:
    path.symlink_to(path.parent / "nowhere" / "x.csv")
    return "a symlink to nothing"


MAKERS = [_make_fifo, _make_socket, _make_dir, _make_link_to_null, _make_link_to_dir,
          _make_dangling_link]  # fmt: skip


def _identity(path: Path) -> tuple[int, int, int]:
    info = os.lstat(path)
    return info.st_mode, info.st_ino, info.st_rdev


@pytest.mark.usefixtures("reviewed")
@pytest.mark.parametrize("fmt", ["csv", "anki"])
@pytest.mark.parametrize("make", MAKERS, ids=lambda m: m.__name__[6:])
def test_a_target_that_is_not_a_regular_file_is_refused_and_kept(
    main: Main,
    deck_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    make: Callable[[Path], str],
) -> None:
    out = tmp_path / f"out.{fmt}"
    says = make(out)
    before = _identity(out)
    assert main(["export", fmt, "--decks", str(deck_dir), str(out)]) == 2
    assert _error(capsys) == f"drill: error: cannot write {out}: " + (
        f"it is {says}" if not says.startswith("a symlink") else says
    ) + (" (give a file name)" if says.endswith("a directory") else "")
    assert _identity(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.usefixtures("reviewed")
@pytest.mark.parametrize("fmt", ["csv", "anki"])
def test_a_device_target_is_refused_and_kept(
    main: Main,
    deck_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    """The device every Linux machine has, /dev/null, as the target (the reported case: as root
    a rename made it a regular file). No device node needs making; a regression is caught by
    the guard on renames before it could replace the machine's /dev/null."""
    device = Path("/dev/null")
    real_replace, real_rename = os.replace, os.rename

    def guarded(move):
        def move_inside_tmp(src, dst, *args, **kwargs):
            assert Path(dst).resolve().is_relative_to(tmp_path), f"a rename onto {dst}"
            return move(src, dst, *args, **kwargs)

        return move_inside_tmp

    monkeypatch.setattr(os, "replace", guarded(real_replace))
    monkeypatch.setattr(os, "rename", guarded(real_rename))
    before = _identity(device)
    assert main(["export", fmt, "--decks", str(deck_dir), str(device)]) == 2
    assert _error(capsys) == f"drill: error: cannot write {device}: it is a device"
    assert _identity(device) == before
    assert not list(device.parent.glob(".null.*.tmp"))


@pytest.mark.usefixtures("reviewed")
def test_a_symlink_to_a_regular_file_writes_that_file(
    main: Main, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "data" / "revlog.csv"
    real.parent.mkdir()
    real.write_text("old contents\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert main(["export", "csv", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == real
    rows = list(csv.DictReader(real.open(newline="")))
    assert [r["card_id"] for r in rows] == ["alpha", "beta"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["revlog.csv"]  # no temp file left


@pytest.mark.usefixtures("reviewed")
def test_csv_to_dash_is_standard_output(
    main: Main, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["export", "csv", "-"]) == 0
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert [(r["card_id"], r["review_rating"]) for r in rows] == [("alpha", "3"), ("beta", "2")]
    assert "wrote standard output: 2 reviews" in captured.err
    assert not (tmp_path / "-").exists()


def test_anki_to_dash_is_refused(
    main: Main, deck_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["export", "anki", "--decks", str(deck_dir), "-"]) == 2
    assert _error(capsys) == (
        "drill: error: an Anki package cannot be written to standard output (give a file name)"
    )
    assert not (tmp_path / "-").exists()


@pytest.mark.usefixtures("reviewed")
@pytest.mark.parametrize("value", ["'garbage'", "'0001-01-01 00:00:00'", "x'00ff'"])
def test_csv_export_skips_a_review_with_a_bad_time_with_a_notice(
    main: Main, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    conn = sqlite3.connect(database_path())
    with conn:
        conn.execute(f"UPDATE review_log SET reviewed_at = {value} WHERE card_id = 'alpha'")
    conn.close()
    out = tmp_path / "revlog.csv"
    assert main(["export", "csv", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "drill: skipped 1 review(s) holding values drill never writes (see: drill db check)\n"
    )
    rows = list(csv.DictReader(out.open(newline="")))
    assert [r["card_id"] for r in rows] == ["beta"]
