"""Lab: grading the model answer and its sampler-position-not-saved variant for real gives
the saved fixtures' shape (DRILL_WRITE_FIXTURES=1 rewrites them) and their own questions."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from drill.mock.coding.followups import (
    WHAT_IF_KIND,
    follow_ups,
    inspect_source,
    read_checks,
    template_facts,
)
from tests.support.coding import detail
from tests.support.followups import BROKEN, FIXTURES, assert_well_formed, fixture, variant_source
from trainer_lab.grading import CHECK_NAMES, model_answer_source


def small(result: dict[str, Any]) -> dict[str, Any]:
    observations = {k: v for k, v in result["observations"].items() if k != "limits"}
    return {
        "lab": result["lab"],
        "status": result["status"],
        "params": {"phases": result["params"]["phases"]},
        "checks": result["checks"],
        "observations": observations,
    }


def shape(result: dict[str, Any], source: str) -> tuple[list, dict]:
    """Check names and verdicts, and the facts read from the details, with the numbers that vary
    between runs masked (a detail's wording may vary: notes on the run, e.g. a slow teardown)."""
    masked = {
        family: {k: re.sub(r"\d+(\.\d+)?", "N", v) for k, v in facts.items()}
        for family, facts in template_facts(read_checks(result), inspect_source(source)).items()
    }
    return [(c["name"], c["passed"]) for c in result["checks"]], masked


@pytest.mark.lab
@pytest.mark.parametrize(
    ("name", "source"),
    [("model-answer", model_answer_source), (BROKEN, lambda: variant_source(BROKEN))],
    ids=["model-answer", BROKEN],
)
def test_real_gradings_have_the_fixtures_shape_and_their_own_questions(name, source, tmp_path):
    """Set DRILL_WRITE_FIXTURES=1 to rewrite the fixtures from these gradings."""
    import os

    from tests.support.coding import grade_source

    result = grade_source(source(), tmp_path, tuple(CHECK_NAMES))
    if os.environ.get("DRILL_WRITE_FIXTURES") == "1":
        path = FIXTURES / f"followups-{name}.json"
        path.write_text(json.dumps(small(result), indent=1) + "\n")
    assert shape(small(result), source()) == shape(fixture(name), source())
    questions = follow_ups(result, source())
    assert_well_formed(questions)
    if name == BROKEN:
        assert questions[0].source_check == "restart.no_replay_or_skip"
        fetched = re.search(r"fetched (\[[^\]]*\])", detail(result, "restart.no_replay_or_skip"))
        assert fetched and fetched.group(1) in questions[0].question
    else:
        assert [q.kind for q in questions] == [WHAT_IF_KIND] * 5
