"""Fault plans graded for real (lab marker): the model answer passes the restart and torn phases
under plans that kill either rank; a "newest" picked by string order fails for every plan (each
resumes at step 16, beside steps 4, 8 and 12); ranks that each resume from their own newest file
fail when one rank's save is torn alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import model_answer_source
from trainer_lab.grading.contract import fault_plan

pytestmark = pytest.mark.lab

FIXTURES = Path(__file__).parent / "fixtures"
PHASES = ("restart", "torn")


def seed_where(**fields: int) -> int:
    """The first seed whose plan has these fields."""
    return next(
        s for s in range(1000) if all(getattr(fault_plan(s), k) == v for k, v in fields.items())
    )


@pytest.mark.parametrize(
    "fields", [{"kill_rank": 0, "tear_rank": 1}, {"kill_rank": 1, "tear_rank": 0}], ids=str
)
def test_the_model_answer_passes_under_plans_that_kill_either_rank(fields, tmp_path):
    seed = seed_where(**fields)
    plan = fault_plan(seed)
    result = grade_source(model_answer_source(), tmp_path, PHASES, seed=seed)
    assert failed(result) == [], [c for c in result["checks"] if not c["passed"]]
    assert result["seed"] == seed  # type: ignore[typeddict-item]
    resumed = detail(result, "restart.resumes_at_checkpoint")
    assert resumed.startswith(
        f"planned fault: rank {plan.kill_rank} SIGKILLed after step {plan.kill_after}, "
        f"relaunched: resumed from the weights after step 16 (expected 16)"
    )
    kill = next(launch for launch in result["launches"] if launch["name"] == "kill")
    assert (
        f"rank {plan.kill_rank}: SIGKILLed as planned after step {plan.kill_after}"
        in (kill["summary"])
    )
    assert result["observations"]["likely_causes"] == []


def test_a_newest_checkpoint_picked_by_string_order_fails_the_restart(tmp_path):
    source = (FIXTURES / "wrong_newest_by_string_sort.py").read_text()
    seed = seed_where(kill_rank=0)
    result = grade_source(source, tmp_path, PHASES, seed=seed)
    # step-8.pt sorts after step-16.pt: the relaunch resumes after step 8, and its first batch
    # (read before the newest checkpoint) was served other values, so the runs part at once
    assert failed(result) == ["restart.matches_uninterrupted", "restart.resumes_at_checkpoint"]
    resumed = detail(result, "restart.resumes_at_checkpoint")
    assert "resumed from the weights after step 8 (expected 16)" in resumed
    causes = result["observations"]["likely_causes"]
    assert len(causes) == 1, causes  # one cause, named once by both checks
    assert causes[0].startswith("an older checkpoint than the newest complete one (step 16)")
    assert "string order" in causes[0]


def test_ranks_that_each_resume_from_their_own_newest_file_fail_a_tear_of_one_rank(tmp_path):
    source = (FIXTURES / "wrong_per_rank_own_newest.py").read_text()
    seed = seed_where(tear_rank=1)
    result = grade_source(source, tmp_path, PHASES, seed=seed)
    # a kill comes between saves (every rank's step-16 file is complete) and a tear of every
    # rank's save leaves every rank at step 4: only the tear of rank 1's save alone tells
    assert failed(result) == ["torn.finishes", "torn.previous_checkpoint_used"]
    names = {launch["name"] for launch in result["launches"]}
    assert {"tear-1", "tear-1-resume"} <= names
    used = detail(result, "torn.previous_checkpoint_used")
    assert "bytes on disk, on rank 1 alone), relaunched" in used
    split = "the ranks resumed from different checkpoints (rank 0 after step 8, rank 1 after step 4"
    assert split in used
    assert split in detail(result, "torn.finishes")
    assert sum(split in cause for cause in result["observations"]["likely_causes"]) == 1
