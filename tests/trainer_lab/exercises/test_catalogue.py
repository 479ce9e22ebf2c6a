"""The catalogue's shape, torch-free: every exercise folder is complete and declares a sane SPEC."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from trainer_lab.exercises.catalogue import CATALOGUE_ERRORS, EXERCISES, get_exercise


def test_the_catalogue_loads_without_errors() -> None:
    assert not CATALOGUE_ERRORS
    assert len(EXERCISES) >= 3


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_an_exercise_is_complete(name: str) -> None:
    spec = EXERCISES[name]
    assert spec.name == name and spec.title and spec.topic and spec.summary
    assert 1 <= len(spec.hints) <= 3
    assert spec.checks and len(set(spec.check_names())) == len(spec.checks)
    assert spec.world_size in (0, 2) and 0 < spec.timeout_s <= 60
    for path in (spec.starter_path, spec.solution_path, spec.folder / "check.py"):
        ast.parse(path.read_text())  # compiles, without being run
    assert spec.starter_path.read_text() != spec.solution_path.read_text()
    assert spec.file.endswith(".py") and "/" not in spec.file


def test_an_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(LookupError, match="unknown exercise 'nope' \\(valid: "):
        get_exercise("nope")


def test_the_catalogue_imports_no_torch() -> None:
    code = (
        "import sys, trainer_lab.exercises.catalogue, trainer_lab.exercises.runner;"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
