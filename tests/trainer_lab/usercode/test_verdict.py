"""A graded run's lab result, as the grader and the exercise runner both build it."""

from __future__ import annotations

import time

from trainer_lab.result import read_result
from trainer_lab.usercode.verdict import begin, check, finish, not_compiled, write_workspace


def test_a_file_that_does_not_compile_fails_every_check_and_is_written(tmp_path):
    result = begin("exercise:x", {"file": "f.py"}, 2, tmp_path)
    assert result["env"]["backend"] == "gloo"
    not_compiled(result, ["a", "b"], "f.py:1: SyntaxError: invalid syntax")
    done = finish(result, tmp_path, time.monotonic(), {"likely_causes": []})
    assert done["status"] == "failed"
    assert [c["detail"] for c in done["checks"]] == [
        "not run: f.py:1: SyntaxError: invalid syntax"
    ] * 2
    assert done["observations"] == {
        "syntax_error": "f.py:1: SyntaxError: invalid syntax",
        "checks_passed": 0,
        "checks_total": 2,
        "likely_causes": [],
    }
    assert read_result(tmp_path) == done


def test_ok_only_when_every_check_held_and_a_cancelled_run_stays_cancelled(tmp_path):
    result = begin("lab", {}, 0, tmp_path)
    assert result["env"]["backend"] is None  # one plain process
    result["checks"] = [check("a", True, "x"), check("b", True, "y")]
    assert finish(result, tmp_path, time.monotonic())["status"] == "ok"
    result["checks"].append(check("c", 0, "z"))  # type: ignore[arg-type]
    assert result["checks"][-1]["passed"] is False
    assert finish(result, tmp_path, time.monotonic())["status"] == "failed"
    result["status"] = "cancelled"
    assert finish(result, tmp_path, time.monotonic())["status"] == "cancelled"


def test_the_workspace_holds_the_texts_and_copies_of_the_given_files(tmp_path):
    given = tmp_path / "given.py"
    given.write_text("X = 1\n")
    write_workspace(tmp_path / "ws", {"train.py": "print(1)\n"}, [given])
    assert (tmp_path / "ws" / "train.py").read_text() == "print(1)\n"
    assert (tmp_path / "ws" / "given.py").read_text() == "X = 1\n"
