"""3-5 well-formed follow-up questions whatever comes in: gated, uncompiled, hung, garbage
or reworded gradings and hostile sources; the questions read the facts, not the details."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from drill.mock.coding.followups import (
    FAILED_KIND,
    FROM_CODE_KIND,
    follow_ups,
    inspect_source,
    read_checks,
    template_facts,
)
from tests.support.coding import detail
from tests.support.followups import BROKEN, assert_well_formed, fixture, variant_source, with_check
from trainer_lab.grading import model_answer_source
from trainer_lab.grading.facts import evidence_facts


def gated(result: dict[str, Any]) -> dict[str, Any]:
    """Every check failed for want of an optimizer step (the grader's gate)."""
    changed = copy.deepcopy(result)
    head = (
        "no optimizer step seen (w2 exited 0 without one); expected a torch.optim optimizer "
        "step per training step"
    )
    for c in changed["checks"]:
        c["passed"] = False
        c["detail"] = (
            f"{head}; observed: {c['detail']}; likely cause: the parameters are not updated by "
            "a torch.optim optimizer"
        )
        c["facts"] = {**evidence_facts(c), "no_optimizer_step": True, "evidence": head}
    return changed


def not_compiled(result: dict[str, Any]) -> dict[str, Any]:
    names = [c["name"] for c in result["checks"]]
    error = "train.py:3: SyntaxError: invalid syntax"
    return {
        "lab": "mock-coding",
        "status": "failed",
        "checks": [
            {"name": n, "passed": False, "detail": f"not run: {error}", "facts": {"not_run": True}}
            for n in names
        ],
        "observations": {"syntax_error": error, "checks_passed": 0, "checks_total": len(names)},
    }


def only_phase(result: dict[str, Any], phase: str) -> dict[str, Any]:
    changed = copy.deepcopy(result)
    changed["checks"] = [c for c in changed["checks"] if c["name"].startswith(f"{phase}.")]
    return changed


def without_facts(result: dict[str, Any]) -> dict[str, Any]:
    """A result written before checks carried facts."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        del c["facts"]
    return changed


def garbage_facts(result: dict[str, Any]) -> dict[str, Any]:
    """Every fact of the wrong type (a hand-edited or foreign result file)."""
    changed = copy.deepcopy(result)
    wrong = [None, "x\x1b[31m", 3.5, True, [None], {"a": 1}]
    for i, c in enumerate(changed["checks"]):
        c["facts"] = {k: wrong[(i + j) % len(wrong)] for j, k in enumerate(c["facts"])}
        c["facts"]["tears"] = [{"path": 3, "bytes": "many", "resumed_after": "x"}, 7]
    changed["checks"][0]["facts"] = "not a mapping"
    return changed


def reworded(result: dict[str, Any]) -> dict[str, Any]:
    """Every check's detail in other words (its facts unchanged)."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        c["detail"] = f"the grader now says this otherwise: {c['name']} [{len(c['detail'])}]"
    return changed


def skeleton_hung(result: dict[str, Any]) -> dict[str, Any]:
    """The one-process run hung: later phases were not run."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        c["passed"] = False
        if c["name"].startswith("skeleton."):
            c["detail"] = (
                "hang: no rank made progress for 8 s (optimizer steps done: rank 0: 3), killed "
                "after 8 s (rank 0: in barrier (a collective) called at train.py:40); expected "
                "an optimizer step at least every 8 s"
            )
        else:
            c["detail"] = "not run: the one-process run did not finish; later phases were not run"
        c["facts"] = evidence_facts(c)
    return changed


HOSTILE_SOURCES = {
    "syntax error": "def f(:\n    pass\n",
    "null bytes": "import torch\x00\n",
    "deep nesting": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
    "deep lists": "x = " + "[" * 300 + "]" * 300 + "\n",
    "long sum": "x = " + "1+" * 100_000 + "1\n",
    "unary chain": "x = " + "-" * 50_000 + "1\n",
    "binop depth 500": "x = " + "a+" * 500 + "1\n",
    "huge": "x = {'a': 1}\n" * 200_000,
    "many dicts": "d = {'phases': {'a': 1}}\n" * 2_000,
    "empty": "",
    "control characters": "print({'phases': {'da\\x1bta': 1, 'f\\u0085wd': 2, 'bwd': 3}})\n",
    "not text": None,
}
RESULTS = {
    "model answer": lambda: fixture("model-answer"),
    "broken": lambda: fixture(BROKEN),
    "gated": lambda: gated(fixture("model-answer")),
    "not compiled": lambda: not_compiled(fixture("model-answer")),
    "only restart": lambda: only_phase(fixture(BROKEN), "restart"),
    "only monitoring": lambda: only_phase(fixture("model-answer"), "monitoring"),
    "skeleton hung": lambda: skeleton_hung(fixture("model-answer")),
    "empty": dict,
    "garbage": lambda: {"checks": [1, None, {"name": 3}, {"name": "x.y", "passed": "no"}]},
    "not a list": lambda: {"checks": "all good", "observations": []},
    "huge detail": lambda: with_check(
        fixture(BROKEN), "torn.previous_checkpoint_used", False, "killed while writing (" * 50_000
    ),
    "unknown check": lambda: {"checks": [{"name": "restart.new", "passed": False, "detail": ""}]},
    "written before facts": lambda: without_facts(fixture(BROKEN)),
    "garbage facts": lambda: garbage_facts(fixture(BROKEN)),
}


@pytest.mark.parametrize("result_name", sorted(RESULTS))
@pytest.mark.parametrize("source_name", sorted(HOSTILE_SOURCES))
def test_always_three_to_five_well_formed_questions(result_name, source_name):
    result, source = RESULTS[result_name](), HOSTILE_SOURCES[source_name]
    questions = follow_ups(result, source)
    assert_well_formed(questions)
    assert follow_ups(result, source) == questions


@pytest.mark.parametrize(
    ("result", "source"),
    [
        (lambda: fixture("model-answer"), model_answer_source),
        (lambda: fixture(BROKEN), lambda: variant_source(BROKEN)),
        (lambda: gated(fixture("model-answer")), str),
        (lambda: skeleton_hung(fixture("model-answer")), model_answer_source),
    ],
    ids=["model-answer", BROKEN, "gated", "hung"],
)
def test_the_questions_read_the_checks_facts_not_their_details(result, source):
    """Details are prose for people: reworded, the run's facts and the questions stay."""
    graded, text = result(), source()
    before = template_facts(read_checks(graded), inspect_source(text))
    after = template_facts(read_checks(reworded(graded)), inspect_source(text))
    assert after == before
    assert follow_ups(reworded(graded), text) == follow_ups(graded, text)


def test_a_result_written_before_facts_gets_neutral_phrases_and_the_details_quoted():
    questions = follow_ups(without_facts(fixture(BROKEN)), variant_source(BROKEN))
    assert_well_formed(questions)
    first = questions[0]
    assert first.source_check == "restart.no_replay_or_skip"
    assert "rank 1 fetched other samples" in first.question  # no fact: a neutral phrase
    assert first.evidence == detail(fixture(BROKEN), "restart.no_replay_or_skip")
    assert not first.rubric[0].startswith("Names the cause")


def test_a_gated_or_uncompiled_script_gets_one_question_for_it_not_one_per_phase():
    questions = follow_ups(gated(fixture("model-answer")), "")
    assert [q.kind for q in questions] == [FAILED_KIND, FROM_CODE_KIND, FROM_CODE_KIND]
    assert questions[0].id == "no-optimizer-step"
    assert "no optimizer step seen (w2 exited 0 without one)" in questions[0].question
    assert "observed" not in questions[0].question
    questions = follow_ups(not_compiled(fixture("model-answer")), "def f(:\n")
    assert questions[0].id == "does-not-compile"
    assert "train.py:3: SyntaxError: invalid syntax" in questions[0].question
    assert [q.kind for q in questions[1:]] == [FROM_CODE_KIND, FROM_CODE_KIND]
    # asked from the code alone, a what-if claims nothing the grading did not show
    assert all("Your save survived" not in q.question for q in questions)


def test_a_hang_asks_about_the_collective_and_a_skipped_phase_asks_nothing():
    questions = follow_ups(skeleton_hung(fixture("model-answer")), model_answer_source())
    assert questions[0].id == "hang-skeleton"
    assert "in barrier (a collective) called at train.py:40" in questions[0].question
    assert "expected an optimizer step" not in questions[0].question
    assert [q.kind for q in questions[1:]] == [FROM_CODE_KIND, FROM_CODE_KIND]


def test_control_characters_in_the_evidence_and_the_source_are_replaced():
    result = with_check(
        fixture("model-answer"), "skeleton.exits", False, "error: rank 0: \x1b[31mboom\x07 x"
    )
    questions = follow_ups(result, HOSTILE_SOURCES["control characters"])
    assert "\ufffd[31mboom\ufffd x" in questions[0].question
    assert_well_formed(questions)


def test_the_source_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\nimport torch\ntorch.save(1, 'p')\n"
    follow_ups(fixture("model-answer"), source)
    assert not marker.exists()
