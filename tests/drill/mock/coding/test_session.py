"""A coding round on disk: created from the starter, saved atomically, resumed with its clock;
a damaged state file does not stop a resume."""

from __future__ import annotations

import os
import threading

from drill.mock.clock import Status
from drill.mock.coding import starter_source
from drill.mock.coding.session import CODING_PHASES, CodingSession
from tests.support.clocks import FakeClock


def test_a_new_round_holds_the_starter_and_the_dataset_module(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    assert session.round_id == 1
    assert session.code() == starter_source()
    assert (session.folder / "drill_data.py").exists()
    assert CodingSession.create(tmp_path / "rounds").round_id == 2


def test_code_notes_and_clock_survive_a_restart(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", minutes=11, now=clock)
    session.clock.start()
    clock.advance(90)
    session.clock.tick()
    session.save(code="print(1)\n", notes="ask about GPUs")

    again = CodingSession.latest(tmp_path / "rounds", now=FakeClock())
    assert again is not None
    assert again.code() == "print(1)\n" and again.notes() == "ask about GPUs"
    assert again.clock.total_used_s() == 90
    assert again.clock.status is Status.PAUSED  # a resumed round waits for F2
    assert again.clock.total_budget_s == 11 * 60
    assert again.phase == CODING_PHASES[1]  # clarify had 60 of the 11 minutes: 90 s moved on
    assert not list(again.folder.glob(".*.tmp"))


def test_a_damaged_state_file_restarts_only_the_clock(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    session.save(code="x = 1\n")
    (session.folder / "state.json").write_text('{"clock": {"phase": "nope"}}')
    again = CodingSession(session.folder)
    assert again.code() == "x = 1\n"
    assert again.clock.total_used_s() == 0


def test_each_phase_end_keeps_the_code_as_it_stood(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    assert session.phase_code("skeleton") is None  # not ended yet
    session.save(code="x = 1\n")
    session.snapshot(1)
    session.save(code="x = 2\n")
    assert session.phase_code("skeleton") == "x = 1\n"
    assert CodingSession(session.folder).phase_code("skeleton") == "x = 1\n"


def test_a_notebook_round_holds_the_notebook_and_reads_train_py_from_it(tmp_path):
    import json

    import nbformat

    from drill.mock.coding.notebook import extract_train_py

    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    path = session.folder / "round.ipynb"
    assert session.notebook_path == path and path.is_file()
    assert json.loads((session.folder / "state.json").read_text())["notebook"] == "round.ipynb"
    assert extract_train_py(path) == session.code() == starter_source()

    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.source.startswith("%%writefile train.py"))
    cell.source = "%%writefile train.py\nprint('from the notebook')"
    nbformat.write(notebook, path)
    session.save()  # a save keeps the round a notebook round
    again = CodingSession(session.folder)
    assert again.notebook_path == path
    assert again.sync_from_notebook() is None
    assert session.script.read_text() == "print('from the notebook')\n"

    cell.source = "print('no magic line')"
    nbformat.write(notebook, path)
    problem = again.sync_from_notebook()
    assert problem is not None and "no cell writes train.py" in problem and "\n" not in problem
    assert session.script.read_text() == "print('from the notebook')\n"  # kept as it was


def test_a_file_round_has_no_notebook(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    assert session.notebook_path is None and session.sync_from_notebook() is None
    assert not (session.folder / "round.ipynb").exists()


def test_a_round_in_the_middle_of_a_stretch_phase_is_offered_for_resume(tmp_path):
    rounds = tmp_path / "rounds"
    stretching = CodingSession.create(rounds)
    stretching.clock.start()
    stretching.clock.finish()
    stretching.stretch = {"current": "accum", "clock": None, "done": [], "used": {}}
    stretching.save()
    done = CodingSession.create(rounds)  # newer, over, its stretch phase ended: not offered
    done.clock.start()
    done.clock.finish()
    done.stretch = {"current": None, "clock": None, "done": ["accum"], "used": {"accum": 5.0}}
    done.save()

    found = CodingSession.latest_unfinished(rounds)
    assert found is not None and found.round_id == stretching.round_id == 1
    assert found.finished and found.in_stretch
    assert not CodingSession(done.folder).in_stretch


def finishes(action, timeout_s: float = 10.0):  # type: ignore[no-untyped-def]
    """action()'s value, failing the test (instead of hanging it) if it blocks."""
    box: dict[str, object] = {}

    def run() -> None:
        box["value"] = action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), "blocked on a file of the round folder"
    return box["value"]


def test_a_fifo_or_a_device_in_the_round_folder_reads_as_nothing(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    session.save(code="x = 1\n", notes="my notes")
    session.snapshot(1)
    folder = session.folder
    for name in ("state.json", "train.py", "snapshots/skeleton.py"):
        (folder / name).unlink()
        os.mkfifo(folder / name)  # nobody ever writes: a plain read would wait for ever
    (folder / "notes.md").unlink()
    (folder / "notes.md").symlink_to("/dev/zero")  # a plain read would never end

    again = finishes(lambda: CodingSession(folder))
    assert again.clock.total_used_s() == 0  # the state is unreadable: the clock starts over
    assert finishes(again.code) == ""
    assert finishes(again.notes) == ""
    assert finishes(lambda: again.phase_code("skeleton")) is None


def test_a_file_over_the_bound_is_not_read(tmp_path):
    from drill.mock.coding.session import MAX_TEXT_BYTES

    session = CodingSession.create(tmp_path / "rounds")
    session.script.write_text("#" * (MAX_TEXT_BYTES + 1))
    assert session.code() == ""
    session.script.write_text("# fits\n")
    assert session.code() == "# fits\n"


def test_the_graded_copy_of_train_py_is_read_with_a_bound(tmp_path):
    from drill.mock.coding.pushback import graded_source

    workspace = tmp_path / "grades" / "1" / "workspace"
    workspace.mkdir(parents=True)
    os.mkfifo(workspace / "train.py")  # the user's script ran there and left a FIFO behind
    assert finishes(lambda: graded_source(tmp_path, 1)) is None
