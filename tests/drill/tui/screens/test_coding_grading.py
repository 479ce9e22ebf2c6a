"""The coding round's verdict text for a grading (drill.tui.screens.coding_grading), from
hand-made gradings: a failed one in one line, a reused one said so, the feedback after."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content

from drill.mock.coding.conductor import RoundGrading
from drill.tui.screens.coding_grading import graded_text

RESULT = {"checks": [{"name": "skeleton.runs", "passed": True, "detail": "ran"}]}


def test_a_failed_grading_is_one_line_and_asks_no_feedback():
    asked: list[int] = []
    text = graded_text(
        RoundGrading(("skeleton",), error="OSError: disk full", notebook_problem="bad cell"),
        lambda: asked.append(1) or [],
    )
    assert text.plain == "grading failed: OSError: disk full"
    assert asked == []


def test_a_reused_grading_says_so_then_its_checks_notices_and_feedback():
    graded = RoundGrading(
        ("skeleton",), RESULT, Path("grades/4"), reused=True, notices=("not recorded",)
    )
    text = graded_text(graded, lambda: [Content("fed back")])
    assert text.plain.splitlines() == [
        "train.py is unchanged since grading 4: its verdicts stand (not run again).",
        "PASS skeleton.runs: ran",
        "not recorded",
        "fed back",
    ]
