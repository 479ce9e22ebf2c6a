"""`drill mock notebook OUT.ipynb` never replaces a user's file (issue 32, item 3): a different
drill_data.py beside OUT (or something there that is not a file) is refused with exit 2 and
left as it was; drill's own, identical one is kept; a notebook or drill_data.py that appears
while drill writes stays too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.mock.coding import notebook
from tests.support.hostile_files import plant
from trainer_lab.grading import dataset_source

MINE = "# my own drill_data.py\nrows = [1, 2, 3]\n"


def test_a_different_drill_data_beside_the_notebook_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "drill_data.py").write_text(MINE)
    assert main(["mock", "notebook", str(tmp_path / "round.ipynb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("drill: error: ") and "drill_data.py exists" in err
    assert len(err.strip().splitlines()) == 1
    assert (tmp_path / "drill_data.py").read_text() == MINE
    assert os.listdir(tmp_path) == ["drill_data.py"]  # no notebook, no temp file


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero", "directory"])
def test_something_else_named_drill_data_is_refused_without_blocking(
    tmp_path: Path, kind: str
) -> None:
    plant(tmp_path / "drill_data.py", kind)
    assert main(["mock", "notebook", str(tmp_path / "round.ipynb")]) == 2
    assert not (tmp_path / "round.ipynb").exists()
    assert (tmp_path / "drill_data.py").is_symlink() or not (tmp_path / "drill_data.py").is_file()


def test_drills_own_drill_data_is_kept_as_it_is(tmp_path: Path) -> None:
    module = tmp_path / "drill_data.py"
    module.write_text(dataset_source())
    inode = module.stat().st_ino
    assert main(["mock", "notebook", str(tmp_path / "second.ipynb")]) == 0
    assert (tmp_path / "second.ipynb").is_file() and module.stat().st_ino == inode


def test_a_notebook_that_appears_while_drill_writes_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "round.ipynb"
    real = notebook.round_notebook

    def someone_writes_first(*args: object, **kwargs: object) -> object:
        target.write_text("theirs\n")  # between drill's check and drill's write
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(notebook, "round_notebook", someone_writes_first)
    assert main(["mock", "notebook", str(target)]) == 2
    assert target.read_text() == "theirs\n"
    assert os.listdir(tmp_path) == ["round.ipynb"]  # drill's drill_data.py taken back
