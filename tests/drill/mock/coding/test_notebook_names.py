"""`drill mock notebook OUT` with a file name that is not UTF-8 (issue 32, item 7): the notebook
is written, the name is shown through drill.text's cleaning (U+FFFD for the bad byte), and no
temporary file is left behind on any error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.mock.coding import notebook


def test_a_non_utf8_name_is_written_and_shown_with_a_replacement_character(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"caf\xe9.ipynb")  # the byte 0xe9 alone is not UTF-8
    assert main(["mock", "notebook", name]) == 0
    out = capsys.readouterr().out
    assert "Notebook: caf\ufffd.ipynb  (drill_data.py beside it)" in out
    out.encode("utf-8")  # every line can reach a UTF-8 terminal
    assert sorted(os.listdir(tmp_path)) == sorted([name, "drill_data.py"])  # no temp file
    cells = json.loads(Path(tmp_path / name).read_bytes())["cells"]
    assert "drill mock grade caf\ufffd.ipynb" in "".join(cells[0]["source"])


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "round.ipynb"
    with pytest.raises(UnicodeEncodeError):
        notebook._write_atomic(target, "text with a lone surrogate \udce9")
    assert list(tmp_path.iterdir()) == []
