"""Follow-up questions (drill.mock.coding.followups) for the model answer and a broken
variant: a failed check is asked with the run's own facts. Fast: gradings are fixtures
saved from real ones (tests/drill/mock/coding/fixtures)."""

from __future__ import annotations

import re

from drill.mock.coding.followup_table import WHAT_IF, WHAT_IF_ORDER
from drill.mock.coding.followups import FAILED_KIND, WHAT_IF_KIND, follow_ups
from tests.support.coding import detail
from tests.support.followups import (
    BROKEN,
    assert_well_formed,
    facts,
    fixture,
    variant_source,
    with_check,
)
from trainer_lab.grading import model_answer_source


def test_a_correct_and_a_broken_script_get_different_questions():
    good = follow_ups(fixture("model-answer"), model_answer_source())
    bad = follow_ups(fixture(BROKEN), variant_source(BROKEN))
    assert_well_formed(good)
    assert_well_formed(bad)
    assert [q.kind for q in good] == [WHAT_IF_KIND] * 5
    assert [q.id for q in good] == [WHAT_IF[f].id for f in WHAT_IF_ORDER]
    assert bad[0].kind == FAILED_KIND
    assert bad[0].source_check == "restart.no_replay_or_skip"
    assert "restart.matches_uninterrupted" in bad[0].question  # the phase's other failure
    assert [q.id for q in good] != [q.id for q in bad]
    # the restart phase held for the model answer: its what-if; failed for the variant: no what-if
    assert "what-if-world-size-change" in {q.id for q in good}
    assert "what-if-world-size-change" not in {q.id for q in bad}
    # deterministic
    assert follow_ups(fixture(BROKEN), variant_source(BROKEN)) == bad


def test_a_failed_check_question_quotes_the_runs_own_facts():
    result = fixture(BROKEN)
    seen = detail(result, "restart.no_replay_or_skip")
    rank, step, fetched, expected = re.search(
        r"rank (\d+), step (\d+) \(resumed after \d+\): fetched (\[[^\]]*\]), the "
        r"uninterrupted run (\[[^\]]*\])",
        seen,
    ).groups()
    q = follow_ups(result, variant_source(BROKEN))[0]
    assert f"rank {rank} fetched {fetched} for step {step}" in q.question
    assert f"the uninterrupted run fetched {expected}" in q.question
    resumed = re.search(r"\(resumed after (\d+)\)", seen).group(1)
    assert f"After your resume from step {resumed}" in q.question
    assert q.evidence and q.evidence in seen
    # the grader's likely cause leads the rubric
    assert q.rubric[0] == (
        "Names the cause the run points to: sampler position not restored (other samples "
        "after the resume)"
    )
    assert "map-sampler-state-correctness" in q.cards


def test_a_resume_from_scratch_is_asked_with_its_numbers():
    """The issue's example: killed after step 9, the relaunch started again at step 0."""
    text = (
        "rank 1 SIGKILLed after step 13, relaunched: resumed from the weights after step 0 "
        "(expected 12), first step line 1 (expected 13); checkpoint writes seen: "
        "ckpt_4.pt after step 4, ckpt_8.pt after step 8, ckpt_12.pt after step 12; likely "
        "cause: the checkpoint's weights were not loaded (the relaunch started from the "
        "initial weights)"
    )
    writes = [{"path": f"ckpt_{s}.pt", "step": s} for s in (4, 8, 12)]
    result = with_check(
        fixture("model-answer"),
        "restart.resumes_at_checkpoint",
        False,
        text,
        killed_rank=1,
        killed_after=13,
        expected_step=12,
        resumed_after=0,
        first_step_line=1,
        checkpoint_writes=writes,
        made_no_step=False,
    )
    questions = follow_ups(result, model_answer_source())
    assert_well_formed(questions)
    q = questions[0]
    assert (q.id, q.kind, q.source_check) == (
        "resume-where",
        FAILED_KIND,
        "restart.resumes_at_checkpoint",
    )
    assert "Rank 1 was killed after step 13" in q.question
    assert "The newest complete checkpoint was step 12" in q.question
    assert "started again from the initial weights (step 0) and printed step 1 first" in (
        q.question
    )
    assert (
        "ckpt_4.pt after step 4, ckpt_8.pt after step 8, ckpt_12.pt after step 12" in (q.rubric[1])
    )
    assert "the checkpoint's weights were not loaded" in q.rubric[0]


def test_rank_0_killed_reads_as_rank_0():
    text = re.sub(
        r"rank \d+ SIGKILLed after step \d+",
        "rank 0 SIGKILLed after step 5",
        detail(fixture("model-answer"), "restart.resumes_at_checkpoint"),
    )
    result = with_check(
        fixture("model-answer"),
        "restart.resumes_at_checkpoint",
        True,
        text,
        **{
            **facts(fixture("model-answer"), "restart.resumes_at_checkpoint"),
            "killed_rank": 0,
            "killed_after": 5,
        },
    )
    world = next(q for q in follow_ups(result, "") if q.id == "what-if-world-size-change")
    assert "rank 0 was killed after step 5" in world.question


def test_a_torn_save_and_a_missing_phase_quote_their_evidence():
    result = fixture("model-answer")
    torn = (
        "killed while writing step-000008.pt (file 1 written after step 8, 512 of 20480 bytes "
        "on disk), relaunched: resumed from the weights after step 8 (expected 4), first step "
        "line 9 (expected 5); checkpoint writes seen: step-000004.pt after step 4; likely "
        "cause: an incomplete (torn) checkpoint was taken for complete"
    )
    tear = {
        "path": "step-000008.pt",
        "write": 1,
        "written_after": 8,
        "bytes": 512,
        "of": 20480,
        "resumed_after": 8,
        "first_step_line": 9,
        "made_no_step": False,
    }
    result = with_check(result, "torn.previous_checkpoint_used", False, torn, tears=[tear])
    phases = (
        "step 1: phases is {'data': 0.0017, 'compute': 0.0035}; expected >= 3 named phases, "
        "each a number of seconds >= 0"
    )
    result = with_check(
        result, "monitoring.named_phases", False, phases, phases=["data", "compute"]
    )
    questions = follow_ups(result, model_answer_source())
    assert_well_formed(questions)
    assert [q.source_check for q in questions[:2]] == [
        "torn.previous_checkpoint_used",
        "monitoring.named_phases",
    ]
    assert "while it wrote step-000008.pt (512 of 20480 bytes on disk)" in questions[0].question
    assert "started again from the weights after step 8" in questions[0].question
    assert "Your step lines had 2 phases" in questions[1].question
    assert "'compute': 0.0035" in questions[1].question
    # the phases that held still ask their what-ifs, but not the two that failed
    ids = [q.id for q in questions[2:]]
    assert ids == ["what-if-world-size-change", "what-if-optimizer-under-fsdp", "what-if-64-ranks"]
