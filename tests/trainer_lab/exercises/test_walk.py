"""Every exercise, run for real: the model answer and a correct answer in another style pass,
the untouched starter fails with a message pointing at the problem, and each known-wrong answer
fails exactly its checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainer_lab.exercises.cases import RIGHT, RIGHT_DIR, STARTER, WRONG, WRONG_DIR, Expect
from trainer_lab.exercises.catalogue import EXERCISES
from trainer_lab.exercises.runner import check_exercise

NAMES = sorted(EXERCISES)
WRONG_CASES = [(name, file) for name in NAMES for file in sorted(WRONG.get(name, {}))]
RIGHT_CASES = [(name, file) for name in NAMES for file in RIGHT.get(name, [])]


def _assert_fails(result: dict, expect: Expect) -> None:
    failing = {c["name"] for c in result["checks"] if not c["passed"]}
    details = {c["name"]: c["detail"] for c in result["checks"]}
    assert result["status"] == "failed", details
    assert failing == expect.failing, details
    first = next(c for c in result["checks"] if not c["passed"])
    assert expect.says in first["detail"], details


def test_every_exercise_has_a_starter_case_a_wrong_and_a_second_right_answer() -> None:
    assert set(STARTER) == set(EXERCISES)
    assert set(EXERCISES) <= {n for n, files in WRONG.items() if files}
    assert set(EXERCISES) <= {n for n, files in RIGHT.items() if files}
    for files in WRONG.values():
        for file in files:
            assert (WRONG_DIR / file).is_file(), file
    for name, files in RIGHT.items():
        assert name in EXERCISES and all((RIGHT_DIR / file).is_file() for file in files)


@pytest.mark.lab
@pytest.mark.parametrize("name", NAMES)
def test_the_model_answer_passes(name: str, tmp_path: Path) -> None:
    spec = EXERCISES[name]
    result = check_exercise(spec, spec.solution_path, tmp_path)
    details = {c["name"]: c["detail"] for c in result["checks"]}
    assert result["status"] == "ok", details
    assert [c["name"] for c in result["checks"]] == spec.check_names()


@pytest.mark.lab
@pytest.mark.parametrize(("name", "file"), RIGHT_CASES)
def test_another_right_answer_passes(name: str, file: str, tmp_path: Path) -> None:
    spec = EXERCISES[name]
    result = check_exercise(spec, RIGHT_DIR / file, tmp_path)
    assert result["status"] == "ok", {c["name"]: c["detail"] for c in result["checks"]}


@pytest.mark.lab
@pytest.mark.parametrize("name", NAMES)
def test_the_starter_fails_pointing_at_the_problem(name: str, tmp_path: Path) -> None:
    spec = EXERCISES[name]
    _assert_fails(check_exercise(spec, spec.starter_path, tmp_path), STARTER[name])


@pytest.mark.lab
@pytest.mark.parametrize(("name", "file"), WRONG_CASES)
def test_a_wrong_answer_fails_for_the_right_reason(name: str, file: str, tmp_path: Path) -> None:
    spec = EXERCISES[name]
    _assert_fails(check_exercise(spec, WRONG_DIR / file, tmp_path), WRONG[name][file])
