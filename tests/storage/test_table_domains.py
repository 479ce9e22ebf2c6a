"""Every table's values are checked (issue 32, item 9): `drill db check` names a row of
exercise_progress, run_log or a mock table whose time does not parse, whose status is not one
drill writes, whose number is not finite or whose JSON does not parse, as it does for card_state
and review_log. Rows written by drill's own repositories pass."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from storage.db import open_database
from storage.exercises import ExerciseRepository
from storage.integrity import VALUES, check_database, validate_database
from storage.mocks import GradeBullet, MockRepository, NewPrompt
from storage.runs import RunEnd, RunRepository

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _database(path: Path) -> Path:
    """A database with one row in each table, written the way drill writes them."""
    db = open_database(path)
    try:
        exercises = ExerciseRepository(db)
        exercises.started("ddp", NOW)
        exercises.checked("ddp", "ok", NOW)
        exercises.set_rated("ddp", 3, NOW)
        runs = RunRepository(db)
        run = runs.start("lab", "resume", {"steps": 4}, 2, "/runs/resume-1", NOW, pid=4242,
                         card_id="c", deck_id="d", predicted="up", certainty="high")  # fmt: skip
        runs.finish(run, RunEnd("ok", NOW, 1.5, {"failed": []}, 3, 3, True, 3))
        mocks = MockRepository(db)
        prompt = NewPrompt(0, "clarify", "c", "d", "What?", json.dumps(["a", "b"]))
        round_id = mocks.create_round("standard", "Standard", "{}", "[300.0]", "{}", [prompt], NOW)
        (stored,) = mocks.load(round_id).prompts  # type: ignore[union-attr]
        mocks.save_report(round_id, [GradeBullet(stored.id, 0, "a", "covered", True)],
                          "solid", 0.75, "{}", NOW, NOW)  # fmt: skip
    finally:
        db.close()
    return path


def _sql(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement)
    conn.close()


def test_rows_drill_writes_are_in_their_domains(tmp_path: Path) -> None:
    _version, problems = check_database(_database(tmp_path / "drill.sqlite3"))
    assert problems == []


@pytest.mark.parametrize(
    ("table", "assignment", "says"),
    [
        ("exercise_progress", "started_at = 'yesterday'", "started_at 'yesterday' is not a time"),
        ("exercise_progress", "last_checked_at = '2026-13-45 99:00:00'", "is not a time"),
        ("exercise_progress", "solved_at = '9999-01-01 00:00:00'", "outside 1970..2999"),
        ("exercise_progress", "last_status = 'exploded'", "last_status 'exploded'"),
        ("exercise_progress", "attempts = -1", "attempts -1 is not a count"),
        ("exercise_progress", "rated = 9", "rated 9"),
        ("run_log", "started_at = 'soon'", "started_at 'soon' is not a time"),
        ("run_log", "finished_at = x'00ff'", "finished_at b'\\x00\\xff' is not a time"),
        ("run_log", "kind = 'bogus'", "kind 'bogus'"),
        ("run_log", "status = 'weird'", "status 'weird'"),
        ("run_log", "duration_s = 9e999", "duration_s inf is not a finite number"),
        ("run_log", "summary_json = '{not json'", "summary_json '{not json' is not a JSON object"),
        ("run_log", "params_json = '[1]'", "params_json '[1]' is not a JSON object"),
        ("run_log", "certainty = 'total'", "certainty 'total'"),
        ("mock_round", "updated_at = 'later'", "updated_at 'later' is not a time"),
        ("mock_round", "status = 'lost'", "status 'lost'"),
        ("mock_round", "clock_json = 'null'", "clock_json 'null' is not a JSON object"),
        ("mock_round", "budgets_json = '{'", "budgets_json '{' is not a JSON list"),
        ("mock_prompt", "answer_saved_at = 'then'", "answer_saved_at 'then' is not a time"),
        ("mock_prompt", "rubric_json = '{}'", "rubric_json '{}' is not a JSON list"),
        ("mock_grade", "auto_status = 'maybe'", "auto_status 'maybe'"),
        ("mock_grade", "checked = 5", "checked 5 is not 0 or 1"),
        ("mock_report", "created_at = 'now'", "created_at 'now' is not a time"),
        ("mock_report", "overall_score = -9e999", "overall_score -inf is not a finite number"),
        ("mock_report", "report_json = ''", "report_json '' is not a JSON object"),
    ],
)
def test_a_damaged_row_in_any_table_is_named(
    tmp_path: Path, table: str, assignment: str, says: str
) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    _sql(path, f"UPDATE {table} SET {assignment}")
    _version, problems = check_database(path)
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.startswith(f"{VALUES}{table} ")
    assert says in problem
    assert validate_database(path) > 0  # a restore still accepts it: the rest is the user's
