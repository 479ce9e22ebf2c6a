"""`drill optimize [--yes] [--timeout S]`: fit FSRS parameters to your own review log.

Plugs into drill/cli/main.py through `register(subparsers)`; the handler returns the exit status.
The fit runs in a subprocess (drill.review.optimize.FitJob) and prints its progress here.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from drill.cli.output import say

DESCRIPTION = """\
Fit FSRS-6 parameters to your own review log (fsrs-rs, a few seconds at most), show how well
the current and the fitted parameters predict your past reviews (log loss: lower is better),
and ask before adopting the fitted ones (stored as fsrs_parameters in settings.toml; delete that
line to go back to the defaults).

Needs at least 400 usable reviews: a usable review is a card reviewed again on a later day than
its previous review (below that the fit would mostly learn noise)."""

EPILOG = """\
exit status:
  0  fitted (adopted, declined, or not adopted because stdin is not a terminal and --yes
     was not given, or because the fitted parameters predict no better)
  1  not enough reviews yet, or the fit failed
  2  a usage error or a problem you can fix (bad settings.toml, unreadable database)"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "optimize",
        help="fit FSRS parameters to your review log",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--yes", "-y", action="store_true", help="adopt the fitted parameters without asking"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="stop the fit after S seconds (default 600)",
    )
    parser.set_defaults(func=cmd_optimize)


def _ask(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_optimize(args: argparse.Namespace) -> int:
    from drill.errors import DrillError
    from drill.review.optimize import NotEnoughReviews, OptimizeError, adopt_parameters, app_fit_job
    from drill.settings import load_settings

    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise DrillError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    settings = load_settings()
    job = app_fit_job(settings, timeout_s=args.timeout)
    try:
        result = job.run(lambda message: say(f"  {message} ...", file=sys.stderr, flush=True))
    except NotEnoughReviews as error:
        say(f"drill: {error}; keep reviewing and try again later", file=sys.stderr)
        return 1
    except OptimizeError as error:
        say(f"drill: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        job.cancel()
        raise
    which = "your current" if settings.fsrs_parameters else "the default"
    say(f"reviews: {result.reviews} logged, {result.items} usable")
    say(f"log loss with {which} parameters: {result.before.log_loss:.4f}")
    say(f"log loss with the fitted parameters: {result.after.log_loss:.4f}")
    say(f"RMSE (bins): {result.before.rmse_bins:.4f} -> {result.after.rmse_bins:.4f}")
    say("fitted parameters: " + ", ".join(f"{v:.4f}" for v in result.fitted))
    if not result.improves:
        say(f"not adopted: the fitted parameters predict your reviews no better than {which} ones")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            say("not adopted: stdin is not a terminal (run `drill optimize --yes` to adopt)")
            return 0
        if not _ask("adopt the fitted parameters? [y/N] "):
            say("not adopted")
            return 0
    path = adopt_parameters(result.fitted)
    say(f"adopted: fsrs_parameters written to {path}")
    return 0
