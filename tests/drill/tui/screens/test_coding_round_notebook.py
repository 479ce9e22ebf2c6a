"""The coding screen in a notebook round: no code editor but a panel that names round.ipynb,
its last save and how many lines of train.py its `%%writefile train.py` cell holds; each save of
the notebook is read (a notebook without such a cell is said so, train.py kept); a grading
reads the notebook as last saved first."""

from __future__ import annotations

import os

import nbformat

from drill.mock.coding import starter_source
from drill.mock.coding.session import CodingSession
from drill.tui.screens import coding_round
from drill.tui.screens.coding_round import CodingApp, CodingRoundScreen
from tests.support.pilot import HostApp, run_async, text_of, until
from tests.support.services import app_slot
from trainer_lab.result import new_result


def set_train_cell(path, source: str) -> None:
    """Save the notebook with the train cell's text replaced (as Jupyter would), a second later
    than before, so its modification time moves."""
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "train.py" in c.source)
    cell.source = source
    before = path.stat().st_mtime_ns
    nbformat.write(notebook, path)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def panel(pilot) -> str:
    return " ".join(text_of(pilot, "#notebook-panel").split())


@run_async
async def test_the_panel_follows_each_save_of_the_notebook(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    app = CodingApp(session, app_slot())
    starter_lines = len(starter_source().splitlines())
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.screen.query("#editor")
        await until(pilot, lambda: f"{starter_lines} lines" in panel(pilot))
        assert "Edit round.ipynb in Jupyter or VS Code; drill watches each save." in panel(pilot)
        assert str(session.notebook_path) in panel(pilot)
        assert "Last save: " in panel(pilot)

        set_train_cell(session.notebook_path, "%%writefile train.py\nimport torch\nprint(1)")
        app.screen.tick_now()
        await until(pilot, lambda: "2 lines" in panel(pilot))
        assert session.script.read_text() == "import torch\nprint(1)\n"

        set_train_cell(session.notebook_path, "print('no magic line')")
        app.screen.tick_now()
        await until(pilot, lambda: "Not read:" in panel(pilot))
        assert "no cell writes train.py" in panel(pilot)
        assert session.script.read_text() == "import torch\nprint(1)\n"  # kept


@run_async
async def test_a_grading_reads_the_notebook_as_last_saved_first(tmp_path, monkeypatch):
    graded: list[str] = []

    def fake_grade(script, out_dir, phases, cancel):
        graded.append(script.read_text())
        return new_result("mock-coding", {}, 2, out_dir)

    monkeypatch.setattr(coding_round, "grade", fake_grade)
    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    # a tick once an hour: no polling here, only the grading reads the notebook
    app = HostApp(CodingRoundScreen(session, app_slot(), tick_s=3600))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "lines" in panel(pilot))
        set_train_cell(session.notebook_path, "%%writefile train.py\nprint('just saved')")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: graded != [] and not app.screen.grading)
    assert graded == ["print('just saved')\n"]
