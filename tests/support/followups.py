"""Helpers for the follow-up tests (tests/drill/mock/coding/test_followup*.py): the saved
gradings (fixtures) and a result with one check rewritten as the grader writes it."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from drill.mock.coding.followups import FAILED_KIND, FROM_CODE_KIND, WHAT_IF_KIND
from trainer_lab.grading.facts import evidence_facts
from trainer_lab.grading.variants import load_variants

FIXTURES = Path(__file__).parents[1] / "drill" / "mock" / "coding" / "fixtures"
BROKEN = "sampler-position-not-saved"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"followups-{name}.json").read_text())


def variant_source(variant_id: str) -> str:
    return next(v for v in load_variants() if v.id == variant_id).source()


def facts(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c["facts"] for c in result["checks"] if c["name"] == name)


def with_check(
    result: dict[str, Any], name: str, passed: bool, text: str, **facts: Any
) -> dict[str, Any]:
    """The result with check `name` as the grader writes it: its detail, the facts every check
    carries (trainer_lab.grading.facts) and its own `facts`."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        if c["name"] == name:
            c["passed"], c["detail"] = passed, text
            c["facts"] = {**evidence_facts(c), **facts}
    return changed


def assert_well_formed(questions: list) -> None:
    assert 3 <= len(questions) <= 5, [q.id for q in questions]
    assert len({q.id for q in questions}) == len(questions)
    order = {FAILED_KIND: 0, WHAT_IF_KIND: 1, FROM_CODE_KIND: 2}
    kinds = [order[q.kind] for q in questions]
    assert kinds == sorted(kinds), [q.kind for q in questions]  # failed first
    for q in questions:
        assert 3 <= len(q.rubric) <= 5, (q.id, q.rubric)
        assert q.cards and q.question and q.source_check
        assert not re.search(r"\{[a-z_0-9]+\}", q.question + " ".join(q.rubric))  # unfilled
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", q.question + " ".join(q.rubric))


# three follow-ups for the one-at-a-time clock (drill.mock.coding.followup_clock) and its screen
QUESTIONS = [
    {"question": "Why did your run start at step 0?", "source_check": "restart.x"},
    {"question": "What changes at W=3 on restart?", "source_check": "what-if"},
    {"question": "Which phase shows a straggler?", "source_check": "what-if"},
]
