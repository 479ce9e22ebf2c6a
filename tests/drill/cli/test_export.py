"""`drill export anki|csv`: files written, exit 0; unknown deck (listing the valid ones),
unwritable OUT: one line, exit 2; nothing to export: exit 1 and no file; --help explains."""

from __future__ import annotations

import csv
import io
import zipfile
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


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Main:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return drill_main(monkeypatch, export)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


def test_anki_export_of_one_deck(
    main: Main, deck_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "basics.apkg"
    assert main(["export", "anki", "--decks", str(deck_dir), "--deck", "basics", str(out)]) == 0
    assert "3 notes in 1 deck(s)" in capsys.readouterr().out
    with zipfile.ZipFile(out) as package:
        assert "collection.anki2" in package.namelist()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_unknown_deck_lists_the_valid_ones(
    main: Main, deck_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.apkg"
    assert main(["export", "anki", "--decks", str(deck_dir), "--deck", "nope", str(out)]) == 2
    err = _one_line_error(capsys)
    assert "unknown deck 'nope' (valid: " in err and "basics" in err
    assert not out.exists()
    assert main(["export", "csv", "--decks", str(deck_dir), "--deck", "nope", str(out)]) == 2
    assert "unknown deck 'nope'" in _one_line_error(capsys)


@pytest.mark.parametrize("where", ["missing-dir/out.apkg", "."])
def test_unwritable_out_is_one_line_exit_2(
    main: Main, deck_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    out = tmp_path / where
    assert main(["export", "anki", "--decks", str(deck_dir), str(out)]) == 2
    err = _one_line_error(capsys)
    assert err.startswith(f"drill: error: cannot write {out}")


def test_csv_export_of_the_review_log(
    main: Main, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = open_app_database(database_path())
    moment = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    rate_card(db, "alpha", "basics", 3, content_hash=None, now=moment, duration_ms=1500)
    rate_card(db, "other", "elsewhere", 2, content_hash=None, now=moment, duration_ms=1500)
    db.close()
    out = tmp_path / "revlog.csv"
    assert main(["export", "csv", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["card_id"] for r in rows] == ["alpha", "other"]
    assert rows[0]["review_time"] == str(int(moment.timestamp() * 1000))


def test_csv_export_of_an_empty_log_is_exit_1_and_writes_nothing(
    main: Main, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "revlog.csv"
    assert main(["export", "csv", str(out)]) == 1
    assert _one_line_error(capsys) == "drill: nothing to export: the review log is empty"
    assert not out.exists()


def test_csv_export_filters_by_deck(
    main: Main, deck_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = open_app_database(database_path())
    moment = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    rate_card(db, "other", "elsewhere", 2, content_hash=None, now=moment)
    db.close()
    out = tmp_path / "revlog.csv"
    assert main(["export", "csv", "--decks", str(deck_dir), "--deck", "basics", str(out)]) == 1
    assert "of deck(s) basics" in _one_line_error(capsys)


def test_help_explains_the_formats_and_exit_codes(
    main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, needles in (
        (["export", "--help"], ("OUT.apkg", "OUT.csv", "exit status")),
        (["export", "anki", "--help"], ("drill::<deck>", "updates the notes", "--deck")),
        (["export", "csv", "--help"], ("review_time (ms since the Unix epoch, UTC)", "0 New")),
    ):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert all(needle in text for needle in needles), (argv, text)
    assert main(["export"]) == 2  # no format: the help, as a usage error
