"""The biotech data-pipeline prompt graded for real (lab): its model answer (length buckets) and
a second answer in another style (packed rows, DDP, the data position in the checkpoint) pass
every check; each wrong variant fails exactly the checks of its bug: padding in the loss or the
attention, pad_sequence's zeros in the loss (caught because the grader reads every
non-amino-acid id as the launch's PAD_ID, usercode/token_remap.py), a split by sequence, a
validation over one shard, one order for every epoch, drop_last, ranks reading the same bucket,
a resume that starts its epoch over, targets not read from the dataset (other labels, the same
gradients), a printed sum instead of the mean per residue, a script that only runs under
torchrun. Graded through trainer_lab.grading.grade(...,
prompt="biotech"), the hook `drill mock grade --prompt biotech` takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.grading import grade
from trainer_lab.grading.prompts.biotech import CHECK_NAMES, PHASES, given_file
from trainer_lab.grading.prompts.biotech_variants import VARIANTS, variant_source

pytestmark = pytest.mark.lab

SEED = 7


def graded(source: str, tmp_path: Path, phases: tuple[str, ...] = PHASES) -> dict:
    script = tmp_path / "train.py"
    script.write_text(source)
    return dict(grade(script, tmp_path / "out", phases, seed=SEED, prompt="biotech"))


def failed(result: dict) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


@pytest.mark.parametrize("answer", ["train.py", "second_answer.py"])
def test_a_correct_answer_passes_every_check(answer: str, tmp_path: Path):
    result = graded(given_file(answer), tmp_path)
    assert [c["name"] for c in result["checks"]] == [n for p in PHASES for n in CHECK_NAMES[p]]
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["lab"] == "mock-coding-biotech" and result["seed"] == SEED


def test_the_starter_fails_the_distributed_checks(tmp_path: Path):
    result = graded(given_file("starter.py"), tmp_path, ("split", "epoch"))
    assert failed(result) == sorted(n for p in ("split", "epoch") for n in CHECK_NAMES[p])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_wrong_variant_fails_for_its_reason(variant: str, tmp_path: Path):
    expected = VARIANTS[variant].fails
    phases = tuple(p for p in PHASES if any(n.startswith(f"{p}.") for n in expected))
    result = graded(variant_source(variant), tmp_path, phases)
    assert failed(result) == sorted(expected), [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["observations"]["likely_causes"], result["observations"]
