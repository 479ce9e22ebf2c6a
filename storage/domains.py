"""The values drill writes into each table, and a check that a stored row holds only such
values. Stdlib only: the light read path (storage.snapshot) uses it too.

A database is a file anyone can edit or hand over, and SQLite stores whatever it is given in
any column. A row outside these domains (a state 99, a rating 7, a due date that does not parse
or lies in the year 9999, a negative stability) is reported by `drill db check` and skipped by
the app with a notice: it never reaches the scheduler, where it would raise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from storage.schema_names import (
    EXERCISE_PROGRESS,
    INTERVIEW_PLAN,
    MOCK_GRADE,
    MOCK_PROMPT,
    MOCK_REPORT,
    MOCK_ROUND,
    RUN_KINDS,
    RUN_LOG,
)

CARD_STATES = (1, 2, 3)  # fsrs State: Learning, Review, Relearning (NULL: never reviewed)
RATINGS = (1, 2, 3, 4)  # Again, Hard, Good, Easy
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)  # FSRS caps an interval at 100 years
MAX_STABILITY_DAYS = 1e6
MIN_DIFFICULTY, MAX_DIFFICULTY = 1.0, 10.0
MAX_STEP = 1000
MAX_COUNT = 10**12  # reps, lapses, duration_ms: an int64 far beyond any real value is damage
MAX_TEXT = 60  # characters of a bad value quoted in a message
_CARD_TIMES = ("due", "last_review", "buried_until", "introduced_at")


class OutOfDomain(ValueError):
    """A stored value drill never writes; str() names the column and the value."""


def shown(value: Any) -> str:
    """A stored value quoted for a one-line message: repr, control characters escaped, cut."""
    text = ascii(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def parse_time(value: Any, column: str) -> datetime:
    """A stored time ('YYYY-MM-DD HH:MM:SS[.ffffff]', UTC without an offset) as aware UTC;
    OutOfDomain when it is not one, or lies outside 1970..2999."""
    if not isinstance(value, str):
        raise OutOfDomain(f"{column} {shown(value)} is not a time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise OutOfDomain(f"{column} {shown(value)} is not a time") from None
    if moment.tzinfo is not None:
        raise OutOfDomain(f"{column} {shown(value)} carries an offset (drill stores UTC)")
    if not EARLIEST.year <= moment.year < LATEST.year:  # EARLIEST <= moment < LATEST, cheaply
        raise OutOfDomain(f"{column} {shown(value)} is outside 1970..2999")
    # what moment.replace(tzinfo=UTC) gives, in a third of its time (issue 40: three times per
    # schedule row, 50,000 rows at every start). Not fromisoformat(value + "Z"): Python 3.11
    # reads '20260312T120Z' and '... 00:00:00 Z' where it refuses them without the 'Z'.
    return datetime(moment.year, moment.month, moment.day, moment.hour, moment.minute,
                    moment.second, moment.microsecond, UTC)  # fmt: skip


def optional_time(value: Any, column: str) -> datetime | None:
    return None if value is None else parse_time(value, column)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (_int(value) or isinstance(value, float)) and math.isfinite(value)


def _count(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    value = row.get(column)
    if not (_int(value) and 0 <= value <= MAX_COUNT):
        problems.append(f"{column} {shown(value)} is not a count")


def _flag(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    if row.get(column) not in (0, 1):
        problems.append(f"{column} {shown(row.get(column))} is not 0 or 1")


def _time(
    row: Mapping[str, Any],
    column: str,
    problems: list[str],
    *,
    required: bool,
    parsed: dict[str, datetime] | None = None,
) -> None:
    value = row.get(column)
    if value is None:
        if required:
            problems.append(f"{column} is missing")
        return
    try:
        moment = parse_time(value, column)
    except OutOfDomain as error:
        problems.append(str(error))
        return
    if parsed is not None:
        parsed[column] = moment


def _text(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    value = row.get(column)
    if not isinstance(value, str) or not value:
        problems.append(f"{column} {shown(value)} is not an id")


def card_state_problems(
    row: Mapping[str, Any], parsed_times: dict[str, datetime] | None = None
) -> list[str]:
    """What is wrong with a card_state row (column name -> stored value); [] when sound. A
    card with a state must carry what the scheduler reads: a due time; stability and difficulty
    once it has left learning (state 2, 3); a step while relearning. `parsed_times`, when
    given, receives each time column that parsed (aware UTC), so a reader parses it once."""
    problems: list[str] = []
    _text(row, "card_id", problems)
    _text(row, "deck_id", problems)
    state = row.get("state")
    scheduled = state is not None
    if scheduled and not (_int(state) and state in CARD_STATES):
        problems.append(f"state {shown(state)} is not one of 1, 2, 3 (or empty)")
    step = row.get("step")
    if step is None:
        if state == 3:  # fsrs asserts a relearning step (a learning card starts at step 0)
            problems.append("step is missing for a card in relearning")
    elif not (_int(step) and 0 <= step <= MAX_STEP):
        problems.append(f"step {shown(step)} is not a learning step")
    for column, low, high in (
        ("stability", 0.0, MAX_STABILITY_DAYS),
        ("difficulty", MIN_DIFFICULTY, MAX_DIFFICULTY),
    ):
        value = row.get(column)
        if value is None:
            if state in (2, 3):  # fsrs asserts both once a card has left learning
                problems.append(f"{column} is missing for a card in review")
        elif not (_number(value) and low <= value <= high and (column != "stability" or value)):
            problems.append(f"{column} {shown(value)} is outside {low:g}..{high:g}")
    for column in _CARD_TIMES:
        _time(row, column, problems, required=scheduled and column == "due", parsed=parsed_times)
    _count(row, "reps", problems)
    _count(row, "lapses", problems)
    _flag(row, "suspended", problems)
    if "leech" in row:
        _flag(row, "leech", problems)
    return problems


def _state_json(value: Any, column: str, problems: list[str], *, required: bool) -> None:
    if value is None:
        if required:
            problems.append(f"{column} is missing")
        return
    try:
        state = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        state = None
    if not isinstance(state, dict):
        problems.append(f"{column} {shown(value)} is not a JSON object")
        return
    for name in _CARD_TIMES:
        if state.get(name):
            try:
                datetime.fromisoformat(state[name])
            except (TypeError, ValueError):
                problems.append(f"{column}.{name} {shown(state[name])} is not a time")


def review_log_problems(row: Mapping[str, Any]) -> list[str]:
    """What is wrong with a review_log row (column name -> stored value); [] when sound."""
    problems: list[str] = []
    _text(row, "card_id", problems)
    _text(row, "deck_id", problems)
    rating = row.get("rating")
    if not (_int(rating) and rating in RATINGS):
        problems.append(f"rating {shown(rating)} is not one of 1, 2, 3, 4")
    _time(row, "reviewed_at", problems, required=True)
    _count(row, "duration_ms", problems)
    _state_json(row.get("state_before"), "state_before", problems, required=False)
    _state_json(row.get("state_after"), "state_after", problems, required=True)
    return problems


# --- the other tables: one check per column (a column the row lacks, from an older schema,
# is not checked). A reader (SQLAlchemy's DateTime, json.loads) raises on any of these values.
ColumnCheck = Callable[[Mapping[str, Any], str, list[str]], None]
RUN_STATUSES = ("running", "ok", "failed", "error", "timeout", "cancelled")
CHECK_STATUSES = RUN_STATUSES[1:]  # trainer_lab.result Status
MOCK_STATUSES = ("running", "grading", "done")
COVERAGES = ("covered", "partial", "missed")  # drill.mock.coverage.Coverage
CERTAINTIES = ("low", "medium", "high")
PLAN_MINUTES = (1, 1440)  # interview_plan.minutes_per_day: a daily budget within one day
PLAN_TARGET = (0.5, 0.99)  # interview_plan.target_recall


def _required_time(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    _time(row, column, problems, required=True)


def _optional_time(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    _time(row, column, problems, required=False)


def _string(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    if not isinstance(row.get(column), str):
        problems.append(f"{column} {shown(row.get(column))} is not text")


def _number_at_least_zero(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    value = row.get(column)
    if not (_number(value) and value >= 0):
        problems.append(f"{column} {shown(value)} is not a finite number >= 0")


def _pid(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    value = row.get(column)
    if not (_int(value) and 0 < value < 2**31):
        problems.append(f"{column} {shown(value)} is not a process id")


def _optional(check: ColumnCheck) -> ColumnCheck:
    def optional(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
        if row.get(column) is not None:
            check(row, column, problems)

    return optional


def _one_of(values: tuple[Any, ...]) -> ColumnCheck:
    def one_of(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
        value = row.get(column)
        if not (isinstance(value, str | int) and not isinstance(value, bool) and value in values):
            listed = ", ".join(str(v) for v in values)
            problems.append(f"{column} {shown(value)} is not one of {listed}")

    return one_of


def _json(kind: type) -> ColumnCheck:
    what = "a JSON object" if kind is dict else "a JSON list"

    def parses(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
        value = row.get(column)
        try:
            parsed = json.loads(value) if isinstance(value, str) else None
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, kind):
            problems.append(f"{column} {shown(value)} is not {what}")

    return parses


def parse_day(value: Any, column: str) -> date:
    """A stored learner date ('YYYY-MM-DD') as a date; OutOfDomain when it is not one."""
    if not (isinstance(value, str) and len(value) == 10):
        raise OutOfDomain(f"{column} {shown(value)} is not a date (YYYY-MM-DD)")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise OutOfDomain(f"{column} {shown(value)} is not a date (YYYY-MM-DD)") from None


def _day(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
    try:
        parse_day(row.get(column), column)
    except OutOfDomain as error:
        problems.append(str(error))


def _between(low: float, high: float, *, whole: bool) -> ColumnCheck:
    def between(row: Mapping[str, Any], column: str, problems: list[str]) -> None:
        value = row.get(column)
        kind = _int(value) if whole else _number(value)
        if not (kind and low <= value <= high):
            problems.append(f"{column} {shown(value)} is outside {low:g}..{high:g}")

    return between


_RATING = _one_of(RATINGS)
TABLE_DOMAINS: dict[str, dict[str, ColumnCheck]] = {
    EXERCISE_PROGRESS: {
        "name": _text, "started_at": _required_time, "attempts": _count,
        "hints_shown": _count, "solution_viewed": _flag,
        "last_status": _optional(_one_of(CHECK_STATUSES)),
        "last_checked_at": _optional_time, "solved_at": _optional_time,
        "rated": _optional(_RATING),
    },
    RUN_LOG: {
        "kind": _one_of(RUN_KINDS), "name": _text, "params_json": _json(dict),
        "world_size": _count, "card_id": _optional(_text), "deck_id": _optional(_text),
        "started_at": _required_time, "finished_at": _optional_time,
        "duration_s": _optional(_number_at_least_zero), "status": _one_of(RUN_STATUSES),
        "checks_passed": _optional(_count), "checks_total": _optional(_count),
        "summary_json": _json(dict), "run_dir": _string, "version": _optional(_string),
        "pid": _optional(_pid), "predicted": _optional(_string),
        "certainty": _optional(_one_of(CERTAINTIES)), "prediction_right": _optional(_flag),
        "suggested_rating": _optional(_RATING), "rating": _optional(_RATING),
    },
    MOCK_ROUND: {
        "round_key": _text, "title": _string, "status": _one_of(MOCK_STATUSES),
        "definition_json": _json(dict), "budgets_json": _json(list), "clock_json": _json(dict),
        "started_at": _required_time, "updated_at": _required_time,
        "finished_at": _optional_time,
    },
    MOCK_PROMPT: {
        "phase_index": _count, "position": _count, "prompt_key": _text,
        "card_id": _optional(_text), "deck_id": _optional(_text), "text": _string,
        "rubric_json": _json(list), "answer": _string, "answer_saved_at": _optional_time,
    },
    MOCK_GRADE: {
        "bullet_index": _count, "bullet": _string, "auto_status": _one_of(COVERAGES),
        "checked": _flag,
    },
    MOCK_REPORT: {
        "created_at": _required_time, "overall_band": _string,
        "overall_score": _number_at_least_zero, "report_json": _json(dict),
    },
    INTERVIEW_PLAN: {
        "interview_day": _day, "role": _text,
        "minutes_per_day": _between(*PLAN_MINUTES, whole=True),
        "target_recall": _between(*PLAN_TARGET, whole=False),
        "created_at": _required_time, "ended": _flag,
    },
}  # fmt: skip


def table_problems(table: str, row: Mapping[str, Any]) -> list[str]:
    """What is wrong with a row of `table` (one of TABLE_DOMAINS); [] when sound."""
    problems: list[str] = []
    for column, check in TABLE_DOMAINS[table].items():
        if column in row:
            check(row, column, problems)
    return problems
