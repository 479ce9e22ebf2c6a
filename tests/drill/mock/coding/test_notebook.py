"""The coding round as a notebook: the written notebook (phases, starter, torchrun cell, notes,
drill_data.py beside it), the graded cell (the last `%%writefile train.py` cell; hostile files
refused in one line, nothing run) and the CLI (`drill mock notebook`, `drill mock grade X.ipynb`
grading that cell exactly like the same file)."""

from __future__ import annotations

import json
import os
import threading

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from drill.cli.main import main
from drill.mock.coding.notebook import (
    MAX_NOTEBOOK_BYTES,
    RUN_COMMAND,
    extract_train_py,
    find_train_cell,
    write_round_notebook,
)
from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.errors import MockError
from trainer_lab.grading import (
    CHECK_NAMES,
    CONTRACT,
    PHASES,
    dataset_source,
    get_prompt,
    starter_source,
)

BROKEN = "import torch\n\ndef main(:\n    pass\n"  # fails every check without a run


def notebook_file(path, *cells):
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


def code(source):
    return new_code_cell(source)


# --- the written notebook ---------------------------------------------------------------------


@pytest.fixture
def written(tmp_path):
    path = write_round_notebook(tmp_path / "ws" / "round.ipynb")
    return path, nbformat.read(path, as_version=4)


def test_the_notebook_is_valid_and_has_a_cell_per_phase_then_code_run_and_notes(written):
    _, notebook = written
    nbformat.validate(notebook)
    ids = [c.id for c in notebook.cells]
    assert ids == [
        "intro",
        "contract",
        *(f"phase-{p.id}" for p in CODING_PHASES),
        "train-py",
        "run",
        "notes",
    ]
    assert [c.cell_type for c in notebook.cells].count("code") == 2
    by_id = {c.id: c for c in notebook.cells}
    assert by_id["run"].source == RUN_COMMAND
    assert RUN_COMMAND == "!torchrun --nproc-per-node 2 train.py --steps 16 --ckpt-dir ckpt"
    assert CONTRACT.rstrip() in by_id["contract"].source
    for number, phase in enumerate(CODING_PHASES, 1):
        text = by_id[f"phase-{phase.id}"].source
        assert text.startswith(f"## {number}. {phase.title} ({phase.minutes:g} min)")
        assert "\n> " in text  # the phase's prompt
    notes = by_id["notes"].source
    assert all(f"### {p.title}" in notes for p in CODING_PHASES)


def test_each_phase_cell_quotes_the_prompt_and_the_contract_lines_that_grade_it(written):
    from drill.mock.coding.talk import STANDARD_PHASE
    from drill.mock.loader import find_round

    _, notebook = written
    by_id = {c.id: c.source for c in notebook.cells}
    standard = {p.id: p for p in find_round("standard").phases}
    sections = dict(get_prompt("ddp").graded)
    assert set(sections) == set(PHASES)
    for phase in CODING_PHASES:
        text = " ".join(by_id[f"phase-{phase.id}"].split())
        for prompt in standard[STANDARD_PHASE[phase.id]].prompts:
            assert " ".join(prompt.text.split()) in text
    for grader_phase, lines in sections.items():
        assert lines.startswith(grader_phase)
        owner = next(p for p in CODING_PHASES if grader_phase in p.grades)
        assert lines in by_id[f"phase-{owner.id}"]  # shown once, with the phase that grades it
    assert "monitoring   step lines carry >= 3 named phases" in by_id["phase-restart"]


def test_the_train_cell_holds_the_starter_and_drill_data_is_written_beside(written):
    path, _ = written
    assert extract_train_py(path) == starter_source()
    cell = find_train_cell(path)
    assert (cell.number, cell.cells, cell.magic, cell.first_line) == (
        8,
        10,
        "%%writefile train.py",
        2,
    )
    assert (path.parent / "drill_data.py").read_text() == dataset_source()
    assert sorted(p.name for p in path.parent.iterdir()) == ["drill_data.py", "round.ipynb"]


def test_an_existing_notebook_is_never_replaced_and_the_name_must_end_in_ipynb(tmp_path):
    path = tmp_path / "mine.ipynb"
    path.write_text("my work")
    with pytest.raises(MockError, match="exists; drill does not replace a notebook"):
        write_round_notebook(path)
    assert path.read_text() == "my work"
    with pytest.raises(MockError, match=r"ends in \.ipynb, got 'round\.py'"):
        write_round_notebook(tmp_path / "round.py")


# --- the graded cell --------------------------------------------------------------------------


def test_the_last_train_cell_wins(tmp_path):
    path = notebook_file(
        tmp_path / "nb.ipynb",
        code("%%writefile train.py\nfirst = 1"),
        code("print('between')"),
        code("%%writefile train.py\nsecond = 2\n"),
        code("%%time\nx = 1"),
    )
    cell = find_train_cell(path)
    assert (cell.source, cell.number, cell.cells) == ("second = 2\n", 3, 4)


@pytest.mark.parametrize(
    "first",
    [
        "%%writefile train.py",
        "%%writefile ./train.py",
        "%%file train.py",
        "%%writefile   train.py  ",
        "%%writefile train.py\r",
    ],
)
def test_the_magic_variants_are_accepted(tmp_path, first):
    path = notebook_file(tmp_path / "nb.ipynb", code(f"{first}\nimport torch\nx = 1"))
    assert extract_train_py(path) == "import torch\nx = 1\n"  # as %%writefile writes it


def test_leading_blank_lines_are_skipped_as_ipython_does(tmp_path):
    path = notebook_file(tmp_path / "nb.ipynb", code("\n  \n%%writefile train.py\nx = 1\n"))
    cell = find_train_cell(path)
    assert (cell.source, cell.first_line) == ("x = 1\n", 4)


@pytest.mark.parametrize(
    "cell",
    [
        code("%%writefile drill_data.py\nx = 1"),
        code("%%writefile -a train.py\nx = 1"),
        code("%%writefile train.py.bak\nx = 1"),
        code("%%writefile other/train.py\nx = 1"),
        code("%%bash\ncat > train.py <<EOF\nx = 1\nEOF"),
        code("%%time\n%%writefile train.py\nx = 1"),
        code("x = 1\n%%writefile train.py"),
        code("# %%writefile train.py\nx = 1"),
        code(""),
        new_markdown_cell("%%writefile train.py\nx = 1"),
        new_raw_cell("%%writefile train.py\nx = 1"),
    ],
)
def test_cells_that_do_not_write_train_py_are_ignored(tmp_path, cell):
    path = notebook_file(tmp_path / "nb.ipynb", cell)
    with pytest.raises(MockError) as error:
        extract_train_py(path)
    message = str(error.value)
    assert message == (
        f"{path}: no cell writes train.py; drill grades a code cell whose first line is "
        "`%%writefile train.py` (or `%%writefile ./train.py`, `%%file train.py`)"
    )


def test_a_notebook_in_the_json_line_list_form_and_an_old_version_are_read(tmp_path):
    path = tmp_path / "lines.ipynb"
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": ["%%writefile train.py\n", "a = 1\n", "b = 2"],
    }
    path.write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell]})
    )
    assert extract_train_py(path) == "a = 1\nb = 2\n"
    old = tmp_path / "v3.ipynb"
    worksheet = {"cells": [{"cell_type": "code", "input": "%%file train.py\nc = 3", "outputs": []}]}
    old.write_text(
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [worksheet]})
    )
    assert extract_train_py(old) == "c = 3\n"


def test_nothing_in_the_notebook_is_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = notebook_file(
        tmp_path / "nb.ipynb",
        code("!touch ran-a-shell"),
        code("%%writefile train.py\nopen('ran-the-cell', 'w')"),
        code("open('ran-python', 'w')"),
    )
    assert extract_train_py(path) == "open('ran-the-cell', 'w')\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]


def refused(path) -> str:
    with pytest.raises(MockError) as error:
        extract_train_py(path)
    message = str(error.value)
    assert "\n" not in message and len(message) < 300
    return message


def test_hostile_files_are_refused_in_one_line(tmp_path):
    huge = tmp_path / "huge.ipynb"
    with huge.open("wb") as handle:  # sparse: refused by its size, never read
        handle.truncate(MAX_NOTEBOOK_BYTES + 1)
    assert refused(huge) == f"{huge} is larger than 16 MiB"

    folder = tmp_path / "dir.ipynb"
    folder.mkdir()
    assert refused(folder) == f"{folder} is not a regular file"
    assert refused(tmp_path / "none.ipynb") == f"no such file: {tmp_path / 'none.ipynb'}"

    cases = {
        "text.ipynb": (b"print('hi')\n", "is not a Jupyter notebook: not JSON (Expecting value"),
        "latin1.ipynb": (b'{"cells": "\xe9"}', "is not a Jupyter notebook: not UTF-8 text"),
        "deep.ipynb": (b"[" * 200_000 + b"]" * 200_000, "not JSON (nested too deeply)"),
        "list.ipynb": (b"[1, 2]", "is not a valid Jupyter notebook"),
        "future.ipynb": (b'{"nbformat": 9, "cells": []}', "is not a valid Jupyter notebook"),
        "badcell.ipynb": (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
            b'"cells": [{"cell_type": "code", "source": 3}]}',
            "is not a valid Jupyter notebook",
        ),
        "empty.ipynb": (b"", "is not a Jupyter notebook: not JSON"),
    }
    for name, (data, expected) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert expected in refused(tmp_path / name), name


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    found: list[str] = []

    def extract() -> None:
        try:
            extract_train_py(fifo)
        except MockError as error:
            found.append(str(error))

    reader = threading.Thread(target=extract, daemon=True)
    reader.start()
    reader.join(10)
    assert found == [f"{fifo} is not a regular file"]


# --- the CLI ----------------------------------------------------------------------------------


def run(argv, capsys) -> tuple[int, str, str]:
    try:
        code_ = main(argv)
    except SystemExit as exited:
        code_ = int(exited.code or 0)
    out, err = capsys.readouterr()
    return code_, out, err


def test_notebook_starts_a_notebook_round_with_a_clock(home, capsys):
    code_, out, _ = run(["mock", "notebook"], capsys)
    path = home / "rounds" / "1" / "round.ipynb"
    assert code_ == 0 and path.is_file() and (path.parent / "drill_data.py").is_file()
    assert out.splitlines() == [
        f"Notebook round 1: {path}  (drill_data.py beside it)",
        f"Open it:   cd {path.parent} && jupyter lab round.ipynb   "
        "(or VS Code; Colab: upload both)",
        "The clock: drill mock watch 1   (or in the app: drill mock coding resume 1)",
        f"Grade now: drill mock grade {path}",
    ]
    # a round like the app's: `drill mock watch`, resume and history find it
    session = CodingSession.latest_unfinished(home / "rounds")
    assert session is not None and session.round_id == 1 and session.notebook_path == path
    assert session.clock.total_used_s() == 0  # the clock starts when it is watched
    assert run(["mock", "notebook"], capsys)[0] == 0
    assert (home / "rounds" / "2" / "round.ipynb").is_file()


def test_notebook_to_a_path_and_its_one_line_errors(tmp_path, capsys):
    out_path = tmp_path / "here" / "interview.ipynb"
    out_path.parent.mkdir()
    code_, out, _ = run(["mock", "notebook", str(out_path)], capsys)
    assert code_ == 0 and out_path.is_file()
    assert f"Grade it: drill mock grade {out_path}" in out
    for argv, message in [
        (["mock", "notebook", str(out_path)], "exists; drill does not replace a notebook"),
        (["mock", "notebook", str(tmp_path / "x.txt")], "a notebook's name ends in .ipynb"),
        (["mock", "notebook", "a.ipynb", "b.ipynb"], "unrecognized arguments: b.ipynb"),
        (["mock", "notebook", str(tmp_path / "gone" / "a.ipynb")], "no directory"),
    ]:
        code_, _, err = run(argv, capsys)
        assert code_ == 2, argv
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_grade_errors_for_notebooks_are_one_line(tmp_path, capsys):
    (tmp_path / "text.ipynb").write_text("not json")
    notebook_file(tmp_path / "none.ipynb", code("%%time\nx = 1"))
    os.mkfifo(tmp_path / "pipe.ipynb")
    for name, message in [
        ("text.ipynb", "is not a Jupyter notebook: not JSON"),
        ("none.ipynb", "no cell writes train.py; drill grades a code cell whose first line is"),
        ("pipe.ipynb", "is not a regular file"),
        ("missing.ipynb", "no such file:"),
    ]:
        code_, out, err = run(["mock", "grade", str(tmp_path / name)], capsys)
        assert code_ == 2, name
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert out == ""


def test_grading_a_notebook_equals_grading_the_same_file(tmp_path, home, capsys):
    script = tmp_path / "train.py"
    script.write_text(BROKEN)
    path = write_round_notebook(tmp_path / "ws" / "round.ipynb")
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[7].source = "%%writefile train.py\n" + BROKEN
    nbformat.write(notebook, path)

    code_file, out_file, _ = run(["mock", "grade", str(script), "--json"], capsys)
    code_nb, out_nb, err_nb = run(["mock", "grade", str(path), "--json"], capsys)
    assert code_file == code_nb == 1
    from_file, from_notebook = json.loads(out_file), json.loads(out_nb)
    assert from_notebook["checks"] == from_file["checks"]
    assert len(from_file["checks"]) == sum(len(names) for names in CHECK_NAMES.values())
    graded = home / "runs" / from_notebook["out_dir"].rsplit("/", 1)[1] / "notebook" / "train.py"
    assert graded.read_text() == BROKEN and from_notebook["params"]["script"] == str(graded)
    assert err_nb.strip() == (
        f"Graded: cell 8 of 10 in {path} (%%writefile train.py; train.py line 1 is the cell's "
        "line 2)"
    )

    code_, out, err = run(["mock", "grade", str(path), "--phase", "skeleton"], capsys)
    assert code_ == 1
    assert out.splitlines()[0] == err_nb.strip()  # the report says which cell was graded
    assert "FAIL  skeleton.exits       not run: train.py:3: SyntaxError: invalid syntax" in out
    assert f"Grading {path} against the coding contract (skeleton)" in err


def test_grade_and_notebook_help_explain_the_notebook(capsys):
    for command, explains in [
        ("grade", "the last code cell whose first line is `%%writefile train.py`"),
        ("notebook", "DRILL_HOME/rounds/<id>/round.ipynb with its clock"),
    ]:
        code_, out, _ = run(["mock", command, "--help"], capsys)
        assert code_ == 0
        assert explains in " ".join(out.split())
    _, out, _ = run(["mock", "--help"], capsys)
    assert "\n    notebook " in out


def _write_notes_cell(path, text):
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.get("id") == "notes")
    cell.source = text
    nbformat.write(notebook, path)


def test_the_notes_cell_is_the_rounds_notes_once_written(tmp_path):
    from drill.mock.coding.notebook import notes_cell_text
    from drill.mock.coding.pushback import question_block

    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    path = session.notebook_path
    assert notes_cell_text(path) == ""  # the template alone says nothing
    session.save(notes="from the app\n")
    assert session.notes() == "from the app\n"  # an untouched cell leaves notes.md in charge

    template = nbformat.read(path, as_version=4).cells[-1].source
    heading = "### Clarify assumptions"
    said = f"{heading}\nTwo ranks on one host, checkpoint to local disk."
    _write_notes_cell(path, template.replace(heading, said))
    notes = session.notes()
    assert notes.startswith("Two ranks on one host, checkpoint to local disk.")
    assert "Monitoring and restart" not in notes  # the template's headings give no credit
    assert "from the app" not in notes

    # the follow-ups come as the notebook's last cell; the answers written there count
    from drill.mock.coding.notebook import append_follow_ups
    from drill.mock.coding.pushback import answers

    session.save(notes=question_block([{"question": "In notes.md?", "source_check": "x"}]))
    block = question_block([{"question": "Why step 0?", "source_check": "failed"}])
    assert append_follow_ups(path, block) is True
    assert append_follow_ups(path, block) is False  # once
    notebook = nbformat.read(path, as_version=4)
    (asked,) = [c for c in notebook.cells if c.get("id") == "follow-ups"]
    assert notebook.cells[-1] is asked and asked.cell_type == "markdown"
    assert "## Q1 (failed)\n> Why step 0?" in asked.source
    notes = session.notes()
    assert "Why step 0?" in notes and "In notes.md?" not in notes  # the notebook alone
    assert "in this cell" not in notes  # the cell's own instruction is no answer
    asked.source += "I resume from ckpt.\n"
    nbformat.write(notebook, path)
    assert answers(session.notes(), 1) == ["I resume from ckpt."]


def test_a_save_between_reading_and_writing_the_notebook_is_kept(tmp_path, monkeypatch):
    import drill.mock.coding.notebook as module
    from drill.mock.coding.pushback import question_block

    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    path = session.notebook_path
    real_read, reads = module.read_notebook, []

    def read_then_user_saves(where):
        notebook = real_read(where)
        reads.append(1)
        if len(reads) == 1:  # Jupyter saves right after drill read the notebook
            _write_notes_cell(path, "## Notes (talk track)\n\nsaved in Jupyter just now\n")
        return notebook

    monkeypatch.setattr(module, "read_notebook", read_then_user_saves)
    block = question_block([{"question": "Why step 0?", "source_check": "failed"}])
    assert module.append_follow_ups(path, block) is True
    assert len(reads) == 2  # the change was seen: read again, appended to the newer save
    cells = nbformat.read(path, as_version=4).cells
    assert "saved in Jupyter just now" in next(c for c in cells if c.id == "notes").source
    assert cells[-1].id == "follow-ups" and "Why step 0?" in cells[-1].source
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_broken_notebook_leaves_the_notes_in_notes_md(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", notebook=True)
    session.save(notes="kept\n")
    session.notebook_path.write_text("{ not json")
    assert session.notes() == "kept\n"


def test_the_notes_cell_is_found_by_its_heading_when_its_id_changed(tmp_path):
    from drill.mock.coding.notebook import notes_cell_text

    path = notebook_file(
        tmp_path / "n.ipynb",
        new_markdown_cell("# intro"),
        new_markdown_cell("## Notes (talk track)\n\nsampler state and RNG per rank"),
    )
    assert notes_cell_text(path) == "sampler state and RNG per rank\n"


def test_a_scaled_notebook_round_labels_its_phases_with_the_scaled_minutes(tmp_path):
    """issue 34: `drill mock notebook --minutes 3` showed the 55-minute round's phase lengths."""
    session = CodingSession.create(tmp_path / "rounds", minutes=11, notebook=True)  # a fifth
    notebook = nbformat.read(session.notebook_path, as_version=4)
    by_id = {c.id: c for c in notebook.cells}
    heads = [by_id[f"phase-{p.id}"].source.splitlines()[0] for p in CODING_PHASES]
    assert heads == [f"## {n}. {p.title} ({p.minutes // 5:g} min)"
                     for n, p in enumerate(CODING_PHASES, 1)]  # fmt: skip
    three = CodingSession.create(tmp_path / "rounds", minutes=3, notebook=True)
    first = nbformat.read(three.notebook_path, as_version=4).cells[2].source.splitlines()[0]
    assert first == f"## 1. {CODING_PHASES[0].title} (0:16)"  # 5 of 55 minutes of 3: 16 s
