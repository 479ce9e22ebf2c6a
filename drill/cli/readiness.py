"""`drill readiness [--json]`: readiness per topic for the interview date, and the five weakest
items with the one action each. Registered by drill/cli/main.py through `register(subparsers)`.

The figures come from drill.services (Services.readiness -> drill.plan.readiness); this module
only lays them out: a table with bars, or the same data as JSON.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import TYPE_CHECKING, Any

from drill.cli.options import add_decks_option
from drill.cli.output import say

if TYPE_CHECKING:
    from drill.plan.readiness import Readiness

DESCRIPTION = """\
How ready you are for the interview, per topic: the role's areas (correctness, performance,
reliability, staff judgment), the interview's phases (clarify, skeleton, distributed lift,
monitoring and restart, pushback) and the deck tags. For each: the expected recall on the
interview date if you stopped reviewing now (a card never introduced counts 0), lab
predictions right at each stated certainty, exercises solved, coding-round checks that held
in the newest grading, and follow-up verdicts. Then the five weakest items, each with the one
action that fixes it.

Without an interview plan the recall is for today; set a date with
  drill plan --date YYYY-MM-DD --role ROLE"""
PLAN_HINT = "set an interview date: drill plan --date YYYY-MM-DD --role ROLE"
NAME_WIDTH = 16
BAR_WIDTH = 12


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "readiness",
        help="readiness per topic for the interview date, and the weakest five",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_decks_option(parser)
    parser.set_defaults(func=cmd_readiness)


def cmd_readiness(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services

    with open_services(args) as services:
        found = services.readiness()
    if args.json:
        print(json.dumps(found.as_json(), indent=2))
        return 0
    for line in text_report(found):
        say(line)
    return 0


def headline(found: Readiness) -> list[str]:
    """Where the figures stand: the interview date and role, or today and how to set a date."""
    if found.day is None or found.today is None:
        return [f"readiness today, {found.today}: expected recall now", PLAN_HINT]
    days = (found.day - found.today).days
    when = f"in {days} day{'s' if days != 1 else ''}" if days > 0 else "passed: recall is today's"
    return [
        f"interview {found.day} ({when}) · role {found.role} · "
        f"expected recall on {found.measured_on}, with no further review"
    ]


def text_report(found: Readiness) -> list[str]:
    from drill.plan.readiness import COLUMN_HELP, KIND_TITLES, meter, topic_cells

    lines = headline(found)
    header = (f"  {'topic':<{NAME_WIDTH}} {'recall':<{BAR_WIDTH + 5}} {'cards':>7} "
              f"{'labs L/M/H':<14} {'ex':>5} {'checks':>6} {'f-ups':>5}")  # fmt: skip
    for kind, title in KIND_TITLES.items():
        topics = [t for t in found.topics if t.kind == kind]
        if not topics:
            continue
        lines += ["", title, header]
        for t in topics:
            c = topic_cells(t)
            name = t.topic if len(t.topic) <= NAME_WIDTH else t.topic[: NAME_WIDTH - 1] + "…"
            lines.append(
                f"  {name:<{NAME_WIDTH}} {meter(t.expected_recall, BAR_WIDTH)} {c['recall']} "
                f"{c['introduced']:>7} {c['predictions']:<14} {c['exercises']:>5} "
                f"{c['checks']:>6} {c['followups']:>5}"
            )
    lines += ["", *textwrap.wrap(COLUMN_HELP, 88), "", "Weakest five"]
    if not found.weakest:
        lines.append("  nothing weak found")
    for number, item in enumerate(found.weakest, 1):
        lines += [f"  {number}. {item.what}: {item.why}", f"     → {item.action}"]
    return lines
