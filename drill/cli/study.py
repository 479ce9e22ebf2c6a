"""`drill study`: open the app straight into custom study (cards by tag / level / deck beyond
today's limits; README "Custom study" says how the schedule is affected)."""

from __future__ import annotations

import argparse
from typing import Any

from drill.review.study import LEVELS, MAX_LIMIT


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "study",
        help="custom study: cards by tag, level or deck beyond today's limits",
        description="Review the matching cards beyond today's limits. Cards not due yet are "
        "logged but keep their schedule.",
    )
    parser.add_argument("--tag", action="append", default=[], metavar="TAG",
                        help="cards with this tag (repeatable: any of them)")  # fmt: skip
    parser.add_argument("--level", choices=LEVELS, help="cards of this level")
    parser.add_argument("--deck", metavar="ID", help="cards of this deck")
    parser.add_argument("--limit", type=int, default=50, metavar="N",
                        help=f"at most N cards (1..{MAX_LIMIT}, default 50)")  # fmt: skip
    parser.set_defaults(func=cmd_study)


def study_options(args: argparse.Namespace) -> Any:
    """The app's options for `args`; DrillError (exit 2, one line) for a bad value."""
    from drill.errors import DrillError
    from drill.review.study import StudyFilter
    from drill.tui.startup import AppOptions

    if not 1 <= args.limit <= MAX_LIMIT:
        raise DrillError(f"--limit must be between 1 and {MAX_LIMIT}, got {args.limit}")
    try:
        chosen = StudyFilter(tuple(args.tag), args.level, args.deck, args.limit)
    except ValueError as error:
        raise DrillError(str(error)) from None
    options = AppOptions.from_args(args)
    options.start_study = chosen
    return options


def cmd_study(args: argparse.Namespace) -> int:
    from drill.tui.app import run_app

    return run_app(study_options(args))
