"""Light read path for first paint: stdlib sqlite3 only (no sqlmodel, ~0.5 s to import).

Reads what the home screen and the first review card need: the schedule of every card that
has state, and how many new cards were introduced since a given time. Never writes, never
creates the file; returns None when the file has another schema version (the caller then takes
the slow path, whose open_database() migrates it or refuses a newer one) or cannot be read. With
strict=True (a review session, after open_database) a file it cannot read raises
storage.errors.DatabaseError instead, saying why.

A row holding values drill never writes (storage.domains) does not stop the read: it comes back
marked `damaged` and suspended, so no queue shows that card and the scheduler never sees the
values; `Snapshot.notice` says how many were skipped (see: drill db check).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from storage.domains import (
    OutOfDomain,
    card_state_problems,
    parse_day,
    parse_time,
    shown,
    table_problems,
)
from storage.errors import DatabaseError, one_line
from storage.migrations import LATEST_VERSION, REVIEW_LOG_TIMED
from storage.schema_names import CARD_STATE, INTERVIEW_PLAN, REVIEW_LOG


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    card_id: str
    deck_id: str
    state: int | None  # None: never reviewed (row exists only for a flag)
    due: datetime | None  # aware UTC
    suspended: bool
    buried_until: datetime | None
    content_hash: str | None
    introduced_at: datetime | None
    leech: bool = False  # lapsed leech_threshold times (column card_state.leech)
    damaged: str | None = None  # what is wrong with the stored row; then skipped (suspended)
    last_review: datetime | None = None  # aware UTC; the interview plan reads the memory state
    stability: float | None = None  # FSRS stability in days (None: new or learning)
    difficulty: float | None = None


@dataclass(frozen=True, slots=True)
class PlanRow:
    """The interview profile in force: the newest row of the plan history (drill plan)."""

    interview_day: date  # the learner date of the interview
    role: str
    minutes_per_day: int  # the daily study budget
    target_recall: float  # predicted recall on the day the plan aims for (0.90 by default)
    created_at: datetime  # aware UTC: when this profile was recorded


@dataclass(frozen=True)
class Snapshot:
    schedules: dict[str, ScheduleRow]
    plan: PlanRow | None = None  # the interview profile in force, None without one
    typical_answer_s: float | None = None  # median answer time (answer_seconds_median)
    plan_damaged: str | None = None  # what is wrong with the newest plan row (then plan None)
    # the newest answers (review_log, up to RECENT_ANSWERS): (reviewed_at aware UTC, seconds
    # clamped to ANSWER_SECONDS_RANGE, None when untimed), newest first: today's minutes spent
    recent_answers: tuple[tuple[datetime, float | None], ...] = ()

    @property
    def plan_notice(self) -> str | None:
        """One line for the user when the newest plan row was skipped as damaged, else None."""
        return plan_notice(self.plan_damaged)

    @property
    def damaged(self) -> list[str]:
        """Ids of the cards skipped because their stored row holds values drill never writes."""
        return damaged_ids(self.schedules)

    @property
    def notice(self) -> str | None:
        """One line for the user when cards were skipped, else None."""
        return damaged_notice(self.schedules)

    def introduced_since(self, since: datetime, until: datetime | None = None) -> int:
        """Cards first reviewed at `since` or later (and at `until` or earlier: a review dated
        after now, from a clock that was once set wrong, is not one of today's)."""
        return sum(
            1
            for r in self.schedules.values()
            if r.introduced_at
            and r.introduced_at >= since
            and (until is None or r.introduced_at <= until)
        )

    def typical_answer_before(self, moment: datetime) -> float | None:
        """The typical answer time as it stood at `moment` (a learner day's start): the rule of
        typical_answer_s over the answers before it (typical_answer_seconds). The interview
        plan prices a whole day with it, so answers given during the day never change that
        day's quota or its short-of-budget decision (drill.review.queue.planned_review_day)."""
        return typical_answer_seconds(self.recent_answers, before=moment)

    def spent_seconds(self, since: datetime, until: datetime, untimed_s: float) -> float:
        """Seconds spent answering from `since` to `until` (the review log's measured answer
        times; an untimed answer counts `untimed_s`)."""
        return sum(
            untimed_s if seconds is None else seconds
            for at, seconds in self.recent_answers
            if since <= at <= until
        )


EMPTY = Snapshot(schedules={})


def damaged_ids(schedules: Mapping[str, ScheduleRow]) -> list[str]:
    """Ids of the cards skipped because their stored row holds values drill never writes."""
    return sorted(card_id for card_id, row in schedules.items() if row.damaged)


def damaged_notice(schedules: Mapping[str, ScheduleRow]) -> str | None:
    """One line for the user when cards were skipped (damaged rows), else None. The ids are
    as stored: a screen shows the line as text (drill.tui.plain), never as markup."""
    damaged = damaged_ids(schedules)
    if not damaged:
        return None
    first = ", ".join(damaged[:3]) + (", ..." if len(damaged) > 3 else "")
    return (
        f"{len(damaged)} card(s) skipped: their stored schedule holds values drill never "
        f"writes ({first}; see: drill db check)"
    )


def plan_notice(damaged: str | None) -> str | None:
    """The one line saying that the stored plan is not in force (damaged row), else None."""
    if damaged is None:
        return None
    return (
        f"the interview plan is not in force: its stored row holds values drill never writes "
        f"({damaged}; see: drill db check, drill plan)"
    )


# --- the interview plan (table interview_plan, schema v7): the newest row is in force --------
PLAN_COLUMNS = ("id", "interview_day", "role", "minutes_per_day", "target_recall",
                "created_at", "ended")  # fmt: skip
NEWEST_PLAN = f"SELECT {', '.join(PLAN_COLUMNS)} FROM {INTERVIEW_PLAN} ORDER BY id DESC LIMIT 1"


def plan_row(values: Mapping[str, object]) -> tuple[PlanRow | None, bool, str | None]:
    """(the profile, whether the row ends the plan, what is wrong) of one interview_plan row
    (column -> stored value). A row outside its domains (storage.domains) gives (None, False,
    the problems): it is not in force."""
    problems = table_problems(INTERVIEW_PLAN, values)
    if problems:
        return None, False, "; ".join(problems)
    row = PlanRow(
        interview_day=parse_day(values["interview_day"], "interview_day"),
        role=str(values["role"]),
        minutes_per_day=int(values["minutes_per_day"]),  # type: ignore[call-overload]
        target_recall=float(values["target_recall"]),  # type: ignore[arg-type]
        created_at=parse_time(values["created_at"], "created_at"),
    )
    return row, bool(values["ended"]), None


# --- measured answer times (review_log.duration_ms): one rule for the light and slow paths --
ANSWER_SECONDS_RANGE = (2.0, 300.0)  # a measured answer time is clamped to this
TYPICAL_WINDOW = 500  # the typical answer time: median over the newest timed reviews
TYPICAL_MINIMUM = 20  # ... once there are this many (a few quick answers say little)
TIMED = REVIEW_LOG_TIMED  # the partial index's WHERE: the queries below use that index
NEWEST_TIMED = (
    f"SELECT duration_ms FROM {REVIEW_LOG} WHERE {TIMED} ORDER BY id DESC LIMIT {TYPICAL_WINDOW}"
)


# today's minutes spent (Snapshot.spent_seconds): the newest answers by id, times checked one
# by one (a row outside its domains is left out: drill db check names it)
RECENT_ANSWERS = 2000
NEWEST_ANSWERS = (  # a search by rowid (no scan of the review log: test_query_plans)
    f"SELECT reviewed_at, duration_ms FROM {REVIEW_LOG} "
    f"WHERE id > (SELECT MAX(id) FROM {REVIEW_LOG}) - {RECENT_ANSWERS} ORDER BY id DESC"
)


def recent_answers(rows: list[tuple[object, object]]) -> tuple[tuple[datetime, float | None], ...]:
    """(reviewed_at, seconds or None when untimed) of review_log rows (reviewed_at, duration_ms),
    seconds clamped to ANSWER_SECONDS_RANGE; rows with a time drill never writes left out."""
    low, high = ANSWER_SECONDS_RANGE
    answers: list[tuple[datetime, float | None]] = []
    for reviewed_at, duration_ms in rows:
        try:
            at = parse_time(reviewed_at, "reviewed_at")
        except OutOfDomain:
            continue
        seconds = None
        if isinstance(duration_ms, int) and not isinstance(duration_ms, bool) and duration_ms > 0:
            seconds = min(max(duration_ms / 1000, low), high)
        answers.append((at, seconds))
    return tuple(answers)


def typical_answer_seconds(
    answers: Sequence[tuple[datetime, float | None]], before: datetime | None = None
) -> float | None:
    """The typical answer time of `answers` (Snapshot.recent_answers: newest first): the median
    of the newest TYPICAL_WINDOW timed ones (answered before `before`, when given), clamped;
    None with fewer than TYPICAL_MINIMUM. Read from the newest RECENT_ANSWERS rows only: after
    more answers than that in one day, the day is priced by the timed answers left in them
    (or as unmeasured)."""
    timed = [
        seconds * 1000
        for at, seconds in answers
        if seconds is not None and (before is None or at < before)
    ]
    return answer_seconds_median(timed[:TYPICAL_WINDOW], TYPICAL_MINIMUM)


def answer_seconds_median(durations_ms: Sequence[float], minimum: int = 1) -> float | None:
    """The median of answer times in milliseconds, in seconds clamped to ANSWER_SECONDS_RANGE;
    None with fewer than `minimum`."""
    if not durations_ms or len(durations_ms) < minimum:
        return None
    ordered = sorted(durations_ms)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    low, high = ANSWER_SECONDS_RANGE
    return min(max(median / 1000, low), high)


def read_snapshot(db_path: Path, *, strict: bool = False) -> Snapshot | None:
    """The current schedules; EMPTY when there is no database yet, None if it needs migrating
    (or is newer than this drill). A file it cannot read: None, or DatabaseError if `strict`."""
    try:
        return _read(db_path)
    except DatabaseError:
        if strict:
            raise
        return None


def _read(db_path: Path) -> Snapshot | None:
    if not db_path.exists():
        return EMPTY
    try:
        conn = sqlite3.connect(db_path.resolve().as_uri() + "?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as error:
        raise _unreadable(db_path, error) from None
    try:
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) != LATEST_VERSION:
            return None
        rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM {CARD_STATE}").fetchall()
        schedules = {row.card_id: row for row in map(_schedule_row, rows)}
        newest = conn.execute(NEWEST_PLAN).fetchone()
        timed = [value for (value,) in conn.execute(NEWEST_TIMED)]
        answers = conn.execute(NEWEST_ANSWERS).fetchall()
    except (sqlite3.Error, ValueError, TypeError) as error:  # damaged file, garbage in a column
        raise _unreadable(db_path, error) from None
    finally:
        conn.close()
    plan, ended, damaged = (None, False, None)
    if newest is not None:
        plan, ended, damaged = plan_row(dict(zip(PLAN_COLUMNS, newest, strict=True)))
    return Snapshot(
        schedules=schedules,
        plan=None if ended else plan,
        typical_answer_s=answer_seconds_median(timed, TYPICAL_MINIMUM),
        plan_damaged=damaged,
        recent_answers=recent_answers(answers),
    )


_COLUMNS = ("card_id", "deck_id", "state", "step", "stability", "difficulty", "due",
            "last_review", "reps", "lapses", "suspended", "buried_until", "content_hash",
            "introduced_at", "leech")  # fmt: skip


def _schedule_row(values: tuple) -> ScheduleRow:  # type: ignore[type-arg]
    row = dict(zip(_COLUMNS, values, strict=True))
    times: dict[str, datetime] = {}  # each time column parsed once, by the domain check
    problems = card_state_problems(row, times)
    if problems:
        card_id = row["card_id"]
        return ScheduleRow(  # a blob id is keyed by its repr: it names no deck's card
            card_id=card_id if isinstance(card_id, str) else shown(card_id),
            deck_id=row["deck_id"] if isinstance(row["deck_id"], str) else "",
            state=None,
            due=None,
            suspended=True,
            buried_until=None,
            content_hash=None,
            introduced_at=None,
            damaged="; ".join(problems),
        )
    return ScheduleRow(
        card_id=row["card_id"],
        deck_id=row["deck_id"],
        state=row["state"],
        due=times.get("due"),
        suspended=bool(row["suspended"]),
        buried_until=times.get("buried_until"),
        content_hash=row["content_hash"] if isinstance(row["content_hash"], str) else None,
        introduced_at=times.get("introduced_at"),
        leech=bool(row["leech"]),
        last_review=times.get("last_review"),
        stability=row["stability"],
        difficulty=row["difficulty"],
    )


def _unreadable(db_path: Path, error: BaseException) -> DatabaseError:
    return DatabaseError(
        f"cannot read the database {db_path}: {one_line(error)} (see: drill db check)"
    )
