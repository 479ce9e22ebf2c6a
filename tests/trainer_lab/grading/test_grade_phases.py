"""trainer_lab.grading.grade without `phases`: every phase of the prompt it names (a prompt's own
phases, never the DDP round's, which another prompt has no checks for: a caller that left
phases out got zero checks, so every mutant 'survived')."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import trainer_lab.grading as grading
from trainer_lab.grading import PHASES, PROMPT_IDS, get_prompt


@pytest.mark.parametrize("prompt", [p for p in PROMPT_IDS if p != "ddp"])
def test_a_prompt_graded_without_phases_gets_its_own_phases(prompt, monkeypatch, tmp_path):
    asked: list[tuple[str, ...]] = []
    entry = get_prompt(prompt)

    def record(script: Path, out_dir: Path, phases: Any, **options: Any) -> str:
        asked.append(tuple(phases))
        return "graded"

    monkeypatch.setattr(grading, "get_prompt", lambda name: entry.__class__(
        **{**entry.__dict__, "grade": record}
    ))  # fmt: skip
    assert grading.grade(tmp_path / "train.py", tmp_path / "out", prompt=prompt) == "graded"
    assert asked == [entry.phases] and set(entry.phases).isdisjoint(PHASES)
    grading.grade(tmp_path / "train.py", tmp_path / "out", ("x",), prompt=prompt)
    assert asked[-1] == ("x",)


def test_the_ddp_round_without_phases_gets_the_contracts_phases(monkeypatch, tmp_path):
    import trainer_lab.grading.grader as grader

    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        grader, "grade_script", lambda script, out, phases, **kw: asked.append(tuple(phases))
    )
    grading.grade(tmp_path / "train.py", tmp_path / "out")
    assert asked == [tuple(PHASES)]
