"""One rule for every output path the CLI takes (issue 32, smaller items): the directory it
goes in must exist. drill never makes the folders of a path it is given; a missing one is
refused with one line and exit 2, and nothing is created (`drill db backup` made them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drill.cli.main import main
from drill.paths import database_path
from storage.db import open_database


@pytest.mark.parametrize(
    "argv",
    [
        ["db", "backup", "{out}/b.sqlite3"],
        ["export", "csv", "{out}/reviews.csv"],
        ["export", "anki", "{out}/deck.apkg"],
        ["lab", "run", "ddp-baseline", "--out", "{out}/run"],
        ["mock", "notebook", "{out}/round.ipynb"],
    ],
)
def test_a_missing_folder_is_refused_not_made(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_database(database_path()).close()
    missing = tmp_path / "missing" / "dir"
    args = [a.format(out=missing) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"cannot write {args[-1]}: no directory {missing}\n"), err
    assert err.count("\n") == 1
    assert not (tmp_path / "missing").exists()
