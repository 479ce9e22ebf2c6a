"""Helpers for the coding-round tests: grade a script given as source text."""

from __future__ import annotations

from pathlib import Path

from trainer_lab.grading import grade
from trainer_lab.result import LabResult


def grade_source(
    source: str, tmp_path: Path, phases: tuple[str, ...], timeout_s: float = 90.0
) -> LabResult:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "train.py"
    script.write_text(source)
    return grade(script, tmp_path / "out", phases, timeout_s=timeout_s).result


def failed(result: LabResult) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


def detail(result: LabResult, name: str) -> str:
    return next(c["detail"] for c in result["checks"] if c["name"] == name)
