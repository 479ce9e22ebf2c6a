"""The distributed-evaluation prompt graded for real (lab): its model answer and a second answer
in another style pass every check; each wrong variant fails exactly the checks of its bug (a
padded sampler, a mean of per-rank means, rank 0's shard only, the best lost on a restart or
picked by string order). Graded through trainer_lab.grading.grade(..., prompt="eval"), the
hook the app's `drill mock grade --prompt eval` takes. Seed 7: the model answer's evals improve
at steps 4, 8 and 12 before the kill (the string-sorted "best-8.pt" is then not the best)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.grading import grade
from trainer_lab.grading.prompts.eval_variants import VARIANTS, variant_source
from trainer_lab.grading.prompts.evaluation import CHECK_NAMES, PHASES, given_file

pytestmark = pytest.mark.lab

SEED = 7


def graded(source: str, tmp_path: Path, phases: tuple[str, ...] = PHASES) -> dict:
    script = tmp_path / "train.py"
    script.write_text(source)
    return dict(grade(script, tmp_path / "out", phases, seed=SEED, prompt="eval"))


def failed(result: dict) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


@pytest.mark.parametrize("answer", ["train.py", "second_answer.py"])
def test_a_correct_answer_passes_every_check(answer: str, tmp_path: Path):
    result = graded(given_file(answer), tmp_path)
    assert [c["name"] for c in result["checks"]] == [n for p in PHASES for n in CHECK_NAMES[p]]
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["lab"] == "mock-coding-eval" and result["seed"] == SEED


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_wrong_variant_fails_for_its_reason(variant: str, tmp_path: Path):
    expected = VARIANTS[variant].fails
    phases = tuple(p for p in PHASES if any(n.startswith(f"{p}.") for n in expected))
    result = graded(variant_source(variant), tmp_path, phases)
    assert failed(result) == sorted(expected), [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["observations"]["likely_causes"], result["observations"]
