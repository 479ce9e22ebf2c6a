"""The interview profile (`drill plan`, the home screen's plan form): an interview date, a role
(decks/roles.toml) and a daily budget in minutes, kept in the database as an append-only history
(storage.plans: every change a new row, the newest in force, --clear an ended row). UI-free.

validate_profile is the one rule for what a profile may hold; set_profile checks and records;
plan_view gathers what `drill plan` shows (days left, the cards still to introduce, whether the
budget covers them: drill.review.pacing.coverage, and the changes so far); describe_profile
turns it into lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from drill.decks.roles import RoleTable, load_roles
from drill.errors import DrillError
from drill.times import learner_date, start_of
from storage.snapshot import PlanRow, plan_notice, read_snapshot

if TYPE_CHECKING:
    from drill.decks.index import DeckIndex
    from drill.review.pacing import Coverage
    from drill.settings import Settings
    from storage.db import Database

DEFAULT_MINUTES = 45
DEFAULT_TARGET = 0.90
MINUTES_RANGE = (5, 600)  # a daily budget: five minutes to ten hours
MAX_DAYS_AHEAD = 365  # an interview at most a year out
MAKE_ONE = "drill plan --date YYYY-MM-DD --role ROLE [--minutes N]"


def parse_day(text: str) -> date:
    """An interview date as typed (YYYY-MM-DD); a one-line DrillError otherwise."""
    shown = ascii(text)[:40]
    if len(text) != 10:
        raise DrillError(f"{shown} is not a date (YYYY-MM-DD)")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise DrillError(f"{shown} is not a date (YYYY-MM-DD)") from None


def validate_profile(day: date, role: str, minutes: int, today: date, roles: RoleTable) -> None:
    """DrillError (one line) for an interview date in the past, today or more than a year out,
    an unknown role (naming the known ones), or minutes per day outside MINUTES_RANGE."""
    if day < today:
        raise DrillError(f"the interview date {day} is in the past (today is {today})")
    if day == today:
        raise DrillError(f"the interview date {day} is today: choose a day after today")
    latest = today + timedelta(days=MAX_DAYS_AHEAD)
    if day > latest:
        raise DrillError(
            f"the interview date {day} is more than a year out (at most {latest}, "
            f"{MAX_DAYS_AHEAD} days)"
        )
    roles.role(role)
    low, high = MINUTES_RANGE
    if not low <= minutes <= high:
        raise DrillError(f"minutes per day {minutes} is outside {low}..{high}")


def today_of(now: datetime, settings: Settings, tz: tzinfo | None = None) -> date:
    """The learner day of `now` (the day starts at settings.day_start_hour)."""
    return learner_date(now, settings.day_start_hour, tz)


def set_profile(
    db: Database,
    day: date,
    role: str,
    minutes: int,
    now: datetime,
    settings: Settings,
    roles: RoleTable | None = None,
    tz: tzinfo | None = None,
    target: float = DEFAULT_TARGET,
) -> PlanRow:
    """Validate and record a profile; it is in force from `now` (earlier ones are kept)."""
    validate_profile(day, role, minutes, today_of(now, settings, tz), roles or load_roles())
    return db.plans.record(day, role, minutes, target, now)


def clear_profile(db: Database, now: datetime) -> bool:
    """End the plan in force (scheduling is plain FSRS again); False when there was none."""
    return db.plans.end(now)


@dataclass(frozen=True)
class PlanView:
    """What `drill plan` shows: the profile in force and where it stands."""

    today: date
    plan: PlanRow | None
    role_title: str | None = None  # None: the plan's role is not in the role table
    cards: int = 0  # cards in the decks, suspended ones left out
    introduced: int = 0  # of them, seen at least once
    seconds_per_review: float | None = None  # measured answer time (None: not measured yet)
    coverage: Coverage | None = None  # None: no plan in force, or the date has come
    history: list[tuple[PlanRow, bool]] = field(default_factory=list)  # oldest first
    notice: str | None = None  # the newest stored row is damaged: not in force

    @property
    def days_left(self) -> int | None:
        return None if self.plan is None else (self.plan.interview_day - self.today).days

    def as_json(self) -> dict[str, Any]:
        plan = self.plan
        cover = self.coverage
        return {
            "today": self.today.isoformat(),
            "plan": None if plan is None else _plan_json(plan) | {"title": self.role_title},
            "days_left": self.days_left,
            "cards": self.cards,
            "introduced": self.introduced,
            "to_introduce": self.cards - self.introduced,
            "seconds_per_review": self.seconds_per_review,
            "coverage": None if cover is None else {
                "covered": cover.covered, "cards": cover.cards, "introduced": cover.introduced,
                "left_out": cover.left_out, "left_out_decks": list(cover.left_out_decks),
                "last_introduction_day": cover.last_introduction_day.isoformat(),
                "final_pass": cover.final_pass,
            },
            "history": [_plan_json(row) | {"ended": ended} for row, ended in self.history],
            "notice": self.notice,
        }  # fmt: skip


def _plan_json(row: PlanRow) -> dict[str, Any]:
    return {
        "interview_day": row.interview_day.isoformat(),
        "role": row.role,
        "minutes_per_day": row.minutes_per_day,
        "target_recall": row.target_recall,
        "created_at": row.created_at.isoformat(),
    }


def plan_view(
    db: Database,
    index: DeckIndex,
    settings: Settings,
    now: datetime,
    roles: RoleTable | None = None,
    tz: tzinfo | None = None,
) -> PlanView:
    """The profile in force, the cards of `index` still to introduce and whether the budget
    covers them, and the history of changes."""
    roles = roles or load_roles()
    today = today_of(now, settings, tz)
    snapshot = read_snapshot(db.path, strict=True)
    if snapshot is None:  # open_database migrated it: another drill changed it since
        raise DrillError(f"cannot read the database {db.path} (see: drill db check)")
    schedules = snapshot.schedules
    card_ids = [cid for deck in index.outline() for cid in deck.card_ids]
    live = [cid for cid in card_ids if not ((row := schedules.get(cid)) and row.suspended)]
    fresh = [cid for cid in live if (row := schedules.get(cid)) is None or row.state is None]
    plan = db.plans.current()
    role = roles.roles.get(plan.role) if plan is not None else None
    introduced = len(live) - len(fresh)
    # the price the queue gives today (drill.review.queue.planned_review_day): as at its start
    answer_s = snapshot.typical_answer_before(start_of(today, settings.day_start_hour, tz))
    cover = _coverage(plan, index, settings, answer_s, roles, today, fresh, introduced)
    return PlanView(
        today=today,
        plan=plan,
        role_title=role.title if role is not None else None,
        cards=len(live),
        introduced=introduced,
        seconds_per_review=answer_s,
        coverage=cover,
        history=db.plans.history(),
        notice=plan_notice(db.plans.damaged()),
    )


def _coverage(
    plan: PlanRow | None,
    index: DeckIndex,
    settings: Settings,
    typical_answer_s: float | None,
    roles: RoleTable,
    today: date,
    fresh: list[str],
    introduced: int,
) -> Coverage | None:
    """Whether the budget introduces every card in time (drill.review.pacing.coverage, the
    scheduler's own estimate); None without a plan in force or once the date has come."""
    from drill.review.deadline import deadline_for
    from drill.review.pacing import plan_coverage

    deadline = deadline_for(plan, index, settings, typical_answer_s, roles)
    if deadline is None or not deadline.active(today):
        return None
    return plan_coverage(deadline, today, fresh, introduced)


def describe_profile(view: PlanView, roles: RoleTable | None = None) -> list[str]:
    """The lines `drill plan` prints with no arguments (text from the database is the caller's
    to print as text: drill.cli.output.say)."""
    lines: list[str] = []
    if view.notice:
        lines.append(view.notice)
    plan = view.plan
    if plan is None:
        known = ", ".join((roles or load_roles()).roles)
        lines.append(f"No interview plan. Make one: {MAKE_ONE} (roles: {known}).")
    else:
        lines.extend(_profile_lines(view, plan))
    if view.history:
        lines.append("changes:")
        for row, ended in view.history:
            when = row.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
            what = "cleared" if ended else (
                f"{row.interview_day} · {row.role} · {row.minutes_per_day} min/day"
            )  # fmt: skip
            lines.append(f"  {when}  {what}")
    return lines


def _profile_lines(view: PlanView, plan: PlanRow) -> list[str]:
    days = view.days_left or 0
    title = view.role_title or "not in the role table: plain FSRS scheduling"
    if days > 0:
        when = f"in {days} day{'s' if days != 1 else ''}"
    elif days == 0:
        when = "today"
    else:
        when = f"{-days} day{'s' if days != -1 else ''} ago: plain FSRS again (drill plan --clear)"
    answer = (
        f"{view.seconds_per_review:.0f} s an answer (measured)"
        if view.seconds_per_review is not None
        else "answer time not measured yet"
    )
    lines = [
        f"Interview {plan.interview_day} ({when})",
        f"role: {plan.role} ({title})",
        f"budget: {plan.minutes_per_day} min/day · target recall on the day "
        f"{plan.target_recall:.0%} · {answer}",
        f"cards: {view.cards} · introduced {view.introduced} · "
        f"to introduce {view.cards - view.introduced}",
    ]
    cover = view.coverage
    if cover is not None:
        by = cover.last_introduction_day
        if cover.covered:
            lines.append(f"coverage: the budget introduces every card by {by}")
            if not cover.final_pass:
                lines.append("final pass: none (the budget goes to new cards up to the eve)")
        else:
            decks = ", ".join(cover.left_out_decks)
            lines.append(
                f"coverage: the budget introduces {cover.introduced} of {cover.cards} new cards "
                f"by {by}; {cover.left_out} left out (from {decks}): the most valuable come "
                "first, more minutes or a later date cover the rest"
            )
            lines.append("final pass: none (the budget goes to new cards up to the eve)")
    return lines
