"""The coding round: the user writes train.py against a contract; trainer_lab.grading grades what
it does. Here: session.py (a round on disk, its phase clock), talk.py (pushback cards, notes
rubric), report.py (the report and the feedback into review), history.py (gradings listed with
the lab runs).

The grader's entry point and the contract the screens show, re-exported so the TUI reaches the
grader through drill.mock (trainer_lab.grading loads the harness only when a grading runs).
"""

from trainer_lab.grading import (
    CONTRACT,
    PHASES,
    Grading,
    ScriptError,
    grade,
    model_answer_source,
    starter_source,
)

__all__ = [
    "CONTRACT",
    "PHASES",
    "Grading",
    "ScriptError",
    "grade",
    "model_answer_source",
    "starter_source",
]
