"""`drill plan`: the interview profile (drill.plan.profile). With --date/--role/--minutes it
records a profile (a change of the one in force keeps what is not given), with --clear it ends
the plan, with neither it shows the profile in force; --json prints the same as plain JSON.

Plugs into drill/cli/main.py through `register(subparsers)`. Usage errors (a malformed or
out-of-range date, an unknown role, minutes out of range, --clear with a profile) are one line
and exit 2; every change is a new row in the plan history, so nothing is lost.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from drill.cli.options import add_decks_option
from drill.cli.output import say
from drill.errors import DrillError
from drill.times import utc_now

DESCRIPTION = """\
An interview on a date: the plan schedules toward it. New cards come in the role's order
(decks/roles.toml weights decks and tags), paced so that every card is introduced a few days
before the date and a day's work stays within the budget; reviews that would fall below the
target recall on the day come before it, and every card is seen once more in the last days.
After the date scheduling is plain FSRS again.

  drill plan --date 2026-05-20 --role training-infra --minutes 45   set a plan
  drill plan --minutes 60                                           change one part of it
  drill plan                                                        show it and its history
  drill plan --clear                                                no plan (plain FSRS)

Every change is kept: `drill plan` lists them."""

clock: Callable[[], datetime] = utc_now  # the wall clock (tests set a fixed one)


def _date(text: str) -> date:
    from drill.plan.profile import parse_day

    try:
        return parse_day(text)
    except DrillError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def register(subparsers: Any) -> None:
    from drill.plan.profile import DEFAULT_MINUTES, MINUTES_RANGE

    parser = subparsers.add_parser(
        "plan",
        help="an interview date, role and daily budget the schedule aims at",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--date", type=_date, metavar="YYYY-MM-DD",
        help="the interview day (after today, at most a year out)",
    )  # fmt: skip
    parser.add_argument(
        "--role", metavar="ROLE",
        help="training-infra, research-engineer, applied-ml or biotech-ml (decks/roles.toml)",
    )  # fmt: skip
    low, high = MINUTES_RANGE
    parser.add_argument(
        "--minutes", type=int, metavar="N",
        help=f"daily study budget in minutes, {low}..{high} (default {DEFAULT_MINUTES})",
    )  # fmt: skip
    parser.add_argument("--clear", action="store_true", help="end the plan (the history is kept)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_decks_option(parser)
    parser.set_defaults(func=cmd_plan)


def cmd_plan(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.decks.roles import load_roles
    from drill.plan.profile import describe_profile, plan_view

    changing = args.date is not None or args.role is not None or args.minutes is not None
    if args.clear and changing:
        raise DrillError("--clear ends the plan: give it alone (or --date/--role/--minutes)")
    roles = load_roles()
    now = clock()
    with open_services(args) as services:
        done = None
        if args.clear:
            done = _clear(services.db, now)
        elif changing:
            done = _change(args, services, now, roles)
        view = plan_view(services.db, services.decks.index, services.settings, now, roles)
    if args.json:
        print(json.dumps(view.as_json(), indent=2))
        return 0
    if done:
        say(done)
    for line in describe_profile(view, roles):
        say(line)
    if view.notice:
        say(f"drill: {view.notice}", file=sys.stderr)
    return 0


def _clear(db: Any, now: datetime) -> str:
    from drill.plan.profile import clear_profile

    if clear_profile(db, now):
        return "plan cleared: scheduling is plain FSRS (the history is kept)"
    return "no interview plan to clear"


def _change(args: argparse.Namespace, services: Any, now: datetime, roles: Any) -> str:
    """Record the profile given, the parts not given kept from the one in force."""
    from drill.plan.profile import DEFAULT_MINUTES, MAKE_ONE, set_profile

    current = services.db.plans.current()
    day = args.date or (current.interview_day if current else None)
    role = args.role or (current.role if current else None)
    if day is None or role is None:
        missing = "--date" if day is None else "--role"
        raise DrillError(f"no interview plan yet: give {missing} too ({MAKE_ONE})")
    if args.minutes is not None:
        minutes = args.minutes
    else:
        minutes = current.minutes_per_day if current is not None else DEFAULT_MINUTES
    if current is not None and (day, role, minutes) == (
        current.interview_day, current.role, current.minutes_per_day
    ):  # fmt: skip
        return "the plan is unchanged"
    target = current.target_recall if current is not None else None
    kept = {"target": target} if target is not None else {}
    plan = set_profile(services.db, day, role, minutes, now, services.settings, roles, **kept)
    verb = "changed" if current is not None else "set"
    return f"plan {verb}: {plan.interview_day} · {plan.role} · {plan.minutes_per_day} min/day"
