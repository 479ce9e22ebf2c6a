"""The notebook round end to end in a real Jupyter kernel (nbclient + ipykernel): the generated
notebook, its train.py cell holding the model answer, runs top to bottom in its folder (the
`%%writefile` cell writes train.py, the `!torchrun` cell trains at W=2 and prints the step lines),
then the graded cell is the model answer and grading the notebook passes like the file does."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from drill.cli.main import main
from drill.mock.coding.notebook import RUN_COMMAND, STEPS, extract_train_py, write_round_notebook
from trainer_lab.grading import model_answer_source

pytestmark = pytest.mark.lab


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def kernel_env() -> dict[str, str]:
    """The kernel's environment: this interpreter's bin first (its torchrun for the `!` cell),
    and a free rendezvous port for torchrun (PET_MASTER_PORT = --master-port) so a parallel
    run on the default 29500 cannot collide."""
    bin_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "PET_MASTER_PORT": str(free_port())}


def step_lines(cell) -> list[dict]:
    found = []
    for output in cell.outputs:
        for line in output.get("text", "").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "step" in record:
                found.append(record)
    return found


def grade_json(path: Path, capsys) -> dict:
    code = main(["mock", "grade", str(path), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == (0 if result["status"] == "ok" else 1)
    return result


def test_the_notebook_runs_in_a_kernel_and_its_cell_grades_like_the_file(tmp_path, capsys):
    path = write_round_notebook(tmp_path / "ws" / "round.ipynb")
    folder = path.parent
    notebook = nbformat.read(path, as_version=4)
    train = next(c for c in notebook.cells if c.id == "train-py")
    train.source = "%%writefile train.py\n" + model_answer_source()
    # the torchrun cell must succeed: IPython keeps the `!` command's exit status
    notebook.cells.append(nbformat.v4.new_code_cell("assert _exit_code == 0, _exit_code"))
    nbformat.write(notebook, path)

    client = NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},  # the kernel's cwd
    )
    client.execute(env=kernel_env())
    nbformat.write(notebook, path)  # as a user saves it, outputs included

    by_id = {c.id: c for c in notebook.cells}
    assert "Writing train.py" in by_id["train-py"].outputs[0]["text"]
    assert by_id["run"].source == RUN_COMMAND
    lines = step_lines(by_id["run"])
    assert [line["step"] for line in lines] == list(range(1, STEPS + 1))
    assert all(len(line["phases"]) >= 3 for line in lines)
    assert (folder / "train.py").read_text() == model_answer_source()
    assert (folder / "ckpt").is_dir()

    assert extract_train_py(path) == model_answer_source()
    from_notebook = grade_json(path, capsys)
    from_file = grade_json(folder / "train.py", capsys)
    assert from_notebook["status"] == "ok", [c for c in from_notebook["checks"] if not c["passed"]]
    verdicts = [(c["name"], c["passed"]) for c in from_notebook["checks"]]
    assert verdicts == [(c["name"], c["passed"]) for c in from_file["checks"]]
