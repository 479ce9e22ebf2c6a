"""`drill exercise solution NAME --diff` on a file that is not UTF-8, too large or not a file at
all (issue 32, item 7): the file is read bounded and never waited on, a non-UTF-8 file is
decoded by drill.files' one rule and said, and a long diff is cut with a line saying so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drill.exercises import service as service_module
from drill.exercises.service import ExerciseError, ExerciseService
from drill.times import utc_now
from storage.db import open_database
from tests.support.hostile_files import plant, python_module, run_bounded
from trainer_lab.exercises.catalogue import get_exercise

NAME = "ddp-by-hand"


def _checked_once(home: Path) -> ExerciseService:
    """A service whose exercise NAME was started and checked once (its solution is open)."""
    db = open_database(home / "drill.sqlite3")
    db.exercises.checked(NAME, "failed", utc_now())
    service = ExerciseService(db, home / "exercises")
    service.user_file(NAME).parent.mkdir(parents=True, exist_ok=True)
    return service


def test_a_latin1_file_is_diffed_decoded_with_a_note(tmp_path: Path) -> None:
    service = _checked_once(tmp_path)
    service.user_file(NAME).write_bytes(b"# caf\xe9 au lait\n")
    lines = service.solution(NAME, diff=True).splitlines()
    assert lines[0].startswith("note: sync.py is not UTF-8 (byte 0xe9 at offset 5)")
    assert lines[1:3] == ["--- yours/sync.py", "+++ solution/sync.py"]
    assert "-# café au lait" in lines


def test_a_huge_sparse_file_is_refused_in_one_line_not_diffed(tmp_path: Path) -> None:
    service = _checked_once(tmp_path)
    path = service.user_file(NAME)
    plant(path, "sparse-huge")
    with pytest.raises(ExerciseError, match=f"^no diff: {path} is larger than 1 MiB$"):
        service.solution(NAME, diff=True)


def test_a_long_diff_is_cut_with_a_line_saying_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(service_module, "MAX_DIFF_LINES", 10)
    service = _checked_once(tmp_path)
    service.user_file(NAME).write_text("".join(f"x{i}\n" for i in range(100)))
    lines = service.solution(NAME, diff=True).splitlines()
    assert len(lines) == 11
    path = service.user_file(NAME)
    assert lines[-1] == f"... diff cut after 10 lines: your file ({path}) differs further"


def test_the_whole_answer_as_a_diff_fits_the_caps(tmp_path: Path) -> None:
    service = _checked_once(tmp_path)  # no file of the user's: every line of the answer added
    diff = service.solution(NAME, diff=True)
    answer = get_exercise(NAME).solution_path.read_text()
    assert "diff cut" not in diff
    assert [line[1:] for line in diff.splitlines()[3:]] == answer.splitlines()


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "directory"])
def test_the_cli_says_in_one_line_when_the_file_is_not_a_regular_file(
    tmp_path: Path, kind: str
) -> None:
    service = _checked_once(tmp_path)
    path = service.user_file(NAME)
    service.db.close()
    plant(path, kind)
    env = {k: v for k, v in os.environ.items() if k != "DRILL_DEBUG"}
    env["DRILL_HOME"] = str(tmp_path)
    done = run_bounded(python_module("drill", "exercise", "solution", NAME, "--diff"), env=env)
    assert done.returncode == 2
    assert done.stderr == f"drill exercise: error: no diff: {path} is not a regular file\n"
    assert done.stdout == ""
