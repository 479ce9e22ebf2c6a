"""The FSDP2-first prompt graded for real (lab): its model answer and a second answer in another
style pass every check; each wrong variant fails exactly the checks of its bug (root-only
fully_shard, the optimizer built before fully_shard, a full state saved by rank 0, local shards
torch.saved, the per-rank batch kept at W=3, the data position restarted, the step off by one,
the optimizer state not saved, a checkpoint written in place, the newest picked by string
order). Graded through trainer_lab.grading.grade(..., prompt="fsdp2"), the hook the app's
`drill mock grade --prompt fsdp2` takes; each variant only on the phases its checks are in."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.grading import grade
from trainer_lab.grading.prompts.fsdp2 import CHECK_NAMES, PHASES, given_file
from trainer_lab.grading.prompts.fsdp2_variants import VARIANTS, variant_source

pytestmark = pytest.mark.lab

SEED = 7


def graded(source: str, tmp_path: Path, phases: tuple[str, ...] = PHASES) -> dict:
    script = tmp_path / "train.py"
    script.write_text(source)
    return dict(grade(script, tmp_path / "out", phases, seed=SEED, prompt="fsdp2"))


def failed(result: dict) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


@pytest.mark.parametrize("answer", ["train.py", "second_answer.py"])
def test_a_correct_answer_passes_every_check(answer: str, tmp_path: Path):
    result = graded(given_file(answer), tmp_path)
    assert [c["name"] for c in result["checks"]] == [n for p in PHASES for n in CHECK_NAMES[p]]
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["lab"] == "mock-coding-fsdp2" and result["seed"] == SEED


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_wrong_variant_fails_for_its_reason(variant: str, tmp_path: Path):
    expected = VARIANTS[variant].fails
    phases = tuple(p for p in PHASES if any(n.startswith(f"{p}.") for n in expected))
    result = graded(variant_source(variant), tmp_path, phases)
    why = [(c["name"], c["detail"]) for c in result["checks"]]
    assert failed(result) == sorted(expected), why
    details = " ".join(c["detail"] for c in result["checks"] if not c["passed"])
    assert VARIANTS[variant].cause in details, why
    assert result["observations"]["likely_causes"], result["observations"]
