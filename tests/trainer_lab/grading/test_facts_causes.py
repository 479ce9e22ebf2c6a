"""A check's likely causes as data (trainer_lab.grading.facts.causes_of): the checks that write
"likely cause: X" put X into their facts where they build the detail, so a reworded detail keeps
its causes; a detail built elsewhere is still read (no process runs)."""

from __future__ import annotations

from tests.support.script_runs import fake_run
from trainer_lab.grading.checks_restart import SAMPLER_CAUSE, no_replay_or_skip
from trainer_lab.grading.facts import causes_of, with_evidence_facts
from trainer_lab.grading.grader import gate, likely_causes
from trainer_lab.usercode.verdict import check


def fetches(ids_per_step: list[list[int]]) -> list[dict]:
    """A rank's fetch records: the ids read for each step, in order (pstep: steps done)."""
    return [{"pstep": done, "id": i} for done, ids in enumerate(ids_per_step) for i in ids]


def other_samples_after_the_resume(tmp_path) -> dict:
    """restart.no_replay_or_skip as the grader builds it: resumed after step 2, the relaunch
    read other samples for step 3 than the uninterrupted run."""
    reference = fake_run(tmp_path / "u", 1, {"fetch-rank0.jsonl": fetches([[0], [1], [2], [3]])})
    relaunch = fake_run(tmp_path / "r", 1, {"fetch-rank0.jsonl": fetches([[9], [3]])})
    return no_replay_or_skip(reference, relaunch, 2)


def reworded(item: dict) -> dict:
    return {**item, "detail": "the grader says this in other words now"}


def test_a_reworded_detail_keeps_the_causes_the_check_set(tmp_path):
    built = other_samples_after_the_resume(tmp_path)
    assert not built["passed"] and built["facts"]["causes"] == [SAMPLER_CAUSE]
    assert f"likely cause: {SAMPLER_CAUSE}" in built["detail"]  # the prose still says it
    changed = reworded(built)
    assert causes_of(changed) == [SAMPLER_CAUSE]
    assert with_evidence_facts(changed)["facts"]["causes"] == [SAMPLER_CAUSE]
    assert likely_causes([changed]) == [SAMPLER_CAUSE]


def test_a_detail_built_elsewhere_is_still_read_for_its_causes():
    elsewhere = check("stretch.x", False, "seen; expected more; likely cause: a; b", {"n": 1})
    assert causes_of(elsewhere) == ["a", "b"]
    assert causes_of({**elsewhere, "passed": True}) == []
    garbled = {**elsewhere, "facts": {"causes": "not a list"}}
    assert causes_of(garbled) == ["a", "b"]


def test_a_gated_check_names_the_gates_cause_not_the_one_it_set(tmp_path):
    why = "no optimizer step seen (w2 exited 0 without one); likely cause: no torch.optim step"
    (gated,) = gate([other_samples_after_the_resume(tmp_path)], why)
    assert gated["facts"]["causes"] == ["no torch.optim step"]
    assert likely_causes([gated]) == ["no torch.optim step"]
