"""The coding round: the user writes train.py (or a notebook's `%%writefile train.py` cell)
against a contract; trainer_lab.grading grades what it does. Here: session.py (a round on disk,
its phase clock, the code as each phase ended, notebook mode), pushback.py (follow-up questions
about the candidate's own code, answered in the notes), talk.py (the notes' talk-track rubric),
walkthrough.py (the model answer per phase, with why), stretch.py (the stretch phases after the
round), report.py (the report and the feedback into review), history.py (gradings listed with
the lab runs). The conductor, UI-free: conductor.py (grading a round or a file: the one
implementation) and rules.py (the clock rules as effects the screen and `drill mock watch`
apply); phases.py (the time table), notebook.py, followups.py and followup_table.py (the
pushback's questions, from check_facts.py: the checks' facts, and script_facts.py: the script's
syntax tree), watch.py (`drill mock watch`), past.py (past rounds for history/stats).

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
