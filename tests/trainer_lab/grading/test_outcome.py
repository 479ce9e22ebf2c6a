"""The grader's one entry point and what it returns: a Grading that is the result file."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from tests.support.paths import REPO
from trainer_lab.grading import CHECK_NAMES, LAB, Grading, grade
from trainer_lab.result import read_result


def test_a_grading_reads_its_result_through_typed_fields_and_is_that_result(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("for x in:\n")
    grading = grade(script, tmp_path / "out", ("skeleton",))
    assert isinstance(grading, Grading)
    assert grading.out_dir == tmp_path / "out"
    assert grading.status == "failed" and not grading.ok
    assert grading.failed == list(CHECK_NAMES["skeleton"])
    assert (grading.passed, grading.total) == (0, len(CHECK_NAMES["skeleton"]))
    assert grading.likely_causes == []
    assert grading["lab"] == LAB
    assert dict(grading) == read_result(tmp_path / "out") == grading
    assert json.loads(json.dumps(dict(grading), default=str))["checks"] == grading.checks


def test_importing_the_entry_point_loads_no_harness():
    code = (
        "import sys, trainer_lab.grading; "
        "print([m for m in sys.modules if m.startswith(('trainer_lab.usercode.harness', "
        "'trainer_lab.grading.grader', 'trainer_lab.launcher', 'torch'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_app_imports_the_grader_only_through_its_package():
    """drill reaches trainer_lab.grading (grade and the contract), never its modules."""
    found = []
    for path in sorted((REPO / "drill").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}: {name}"
                for name in names
                if name.startswith("trainer_lab.grading.")
            ]
    assert found == []
