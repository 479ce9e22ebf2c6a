"""The preemption prompt graded for real (lab): its model answer and a second answer in another
style pass every check, whichever rank the first SIGTERM reaches; each wrong variant fails
exactly the checks of its bug. Graded through trainer_lab.grading.grade(..., prompt=
"preemption"), the hook the app's `drill mock grade --prompt preemption` takes. Seed 7: the first
SIGTERM reaches rank 1, so rank 0 (the one that saves) learns of it a step later; seed 2: rank 0
first."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.grading import grade
from trainer_lab.grading.prompts.preempt_variants import VARIANTS, variant_source
from trainer_lab.grading.prompts.preemption import CHECK_NAMES, PHASES, first_rank, given_file

pytestmark = pytest.mark.lab

SEED = 7


def graded(source: str, tmp_path: Path, phases=PHASES, seed: int = SEED) -> dict:
    script = tmp_path / "train.py"
    script.write_text(source)
    return dict(grade(script, tmp_path / "out", phases, seed=seed, prompt="preemption"))


def failed(result: dict) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


def test_the_seeds_put_the_first_sigterm_on_either_rank():
    assert (first_rank(7), first_rank(2)) == (1, 0)


@pytest.mark.parametrize("seed", [7, 2])
@pytest.mark.parametrize("answer", ["train.py", "second_answer.py"])
def test_a_correct_answer_passes_every_check(answer: str, seed: int, tmp_path: Path):
    result = graded(given_file(answer), tmp_path, seed=seed)
    assert [c["name"] for c in result["checks"]] == [n for p in PHASES for n in CHECK_NAMES[p]]
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["lab"] == "mock-coding-preemption" and result["seed"] == seed
    sent = result["observations"]["sigterm"]
    # every rank got SIGTERM in both preempted launches; in "term-again" a second one mid-save
    assert all(sent[launch][rank] for launch in ("term", "term-again") for rank in ("0", "1"))
    assert any(
        r["why"].startswith("during the save") for rank in sent["term-again"].values() for r in rank
    )
    # the stop phase's second run: the other rank first; the late one stopped before its signal
    other = str(1 - first_rank(seed))
    assert [r["why"] for r in sent["term-late"][other]] == ["after step 6"]
    assert sent["term-late"][str(first_rank(seed))] == []


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_wrong_variant_fails_for_its_reason(variant: str, tmp_path: Path):
    expected = VARIANTS[variant].fails
    result = graded(variant_source(variant), tmp_path)
    assert failed(result) == sorted(expected), [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["observations"]["likely_causes"], result["observations"]
