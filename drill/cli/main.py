"""`drill` command line. No arguments opens the TUI; subcommands work headless.

The subcommands live in their own drill.cli modules: each module's
`register(subparsers)` adds its parser and sets `func=handler` with `handler(args) -> int`
(registering stays light: handlers import what they need). Errors reach the user as one line on
stderr: DrillError -> exit 2; anything unexpected -> exit 1 with a hint (DRILL_DEBUG=1 shows the
traceback); a command stopped by signal N -> exit 128 + N (drill.cli.signals).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from drill import __version__
from drill.cli import (
    cards,
    db,
    exercise,
    export,
    lab,
    mock,
    optimize,
    plan,
    readiness,
    runs,
    signals,
    stats,
    study,
    verify,
)
from drill.cli.options import add_decks_option
from drill.cli.output import say
from drill.errors import DrillError, Terminated
from drill.text import printable

DESCRIPTION = """\
Spaced-repetition drills for ML-training-infrastructure interviews.
Run without a command to open the review app (home screen: decks with due/new counts)."""

EPILOG = """\
environment:
  DRILL_HOME    where the database, settings.toml and lab runs live
                (default: the platform user data dir, e.g. ~/.local/share/drill)
  DRILL_DECKS   extra deck directories, separated by ':' (like --decks)
  DRILL_DEBUG=1 show tracebacks for unexpected errors
"""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (and exit 2), not a usage block; every argparse error passes
    here, and what it quotes from the command line is shown as text (no escape sequences)."""

    def error(self, message: str) -> NoReturn:
        line = " ".join(printable(f"{self.prog}: error: {message}").split("\n"))
        self.exit(2, f"{line} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="drill",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"drill {__version__}")
    add_decks_option(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    decks = sub.add_parser("decks", help="list or check decks", description="List or check decks.")
    decks.set_defaults(func=lambda _args: _usage(decks))
    decks_sub = decks.add_subparsers(dest="decks_command", metavar="{list,check}")
    p_list = decks_sub.add_parser(
        "list", help="list loaded decks with card counts", description="List the loaded decks."
    )
    add_decks_option(p_list, top=False)
    p_list.set_defaults(func=cmd_decks_list)
    p_check = decks_sub.add_parser(
        "check",
        help="validate deck files",
        description="Validate deck files: one line per problem (path:line: card ID: message), "
        "exit 1 if there are any; exit 0 with a summary when all is well. Without PATH: "
        "the bundled decks and your deck directories.",
    )
    p_check.add_argument("paths", nargs="*", metavar="PATH", help="deck files or directories")
    add_decks_option(p_check, top=False)
    p_check.set_defaults(func=cmd_decks_check)

    due = sub.add_parser(
        "due",
        help="due and new counts per deck (for scripts and status bars)",
        description="Due and new counts per deck. New counts are capped by what is left of "
        "today's new-card limit.",
    )
    due.add_argument("--json", action="store_true", help="print JSON: {decks: [...], totals}")
    add_decks_option(due, top=False)
    due.set_defaults(func=cmd_due)

    for module in (
        cards,
        db,
        exercise,
        export,
        lab,
        mock,
        optimize,
        plan,
        readiness,
        runs,
        stats,
        study,
        verify,
    ):
        module.register(sub)
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


# --- commands ----------------------------------------------------------------------------------
def cmd_decks_list(args: argparse.Namespace) -> int:
    from drill.decks.hints import check_command
    from drill.decks.loader import load_decks

    decks = load_decks(args.decks)
    for loaded in decks.decks:
        count = len(loaded.deck.cards)
        say(f"{loaded.deck.deck:<24} {count:>4} cards  {loaded.deck.title}  ({loaded.path})")
    for path in decks.invalid_paths:
        say(f"{'(invalid)':<24} {'':>4}        {path}  (see: {check_command([path])})")
    return 0


def cmd_decks_check(args: argparse.Namespace) -> int:
    from drill.decks.index import deck_files
    from drill.decks.links import LAB_LINK_CHECKS
    from drill.decks.loader import check_files, given_files

    configured = deck_files(args.decks)  # bundled, --decks, DRILL_DECKS: what the app loads
    if args.paths:
        files = given_files(args.paths)
        checked = check_files(files, context=configured, link_checks=LAB_LINK_CHECKS)
    else:
        checked = check_files(configured, link_checks=LAB_LINK_CHECKS)
    for problem in checked.problems:
        say(problem)
    if checked.problems:
        files = len({p.path for p in checked.problems})
        say(f"{len(checked.problems)} problem(s) in {files} file(s)", file=sys.stderr)
        return 1
    cards = sum(len(d.deck.cards) for d in checked.decks)
    say(f"ok: {len(checked.decks)} deck(s), {cards} card(s), no problems")
    return 0


def cmd_due(args: argparse.Namespace) -> int:
    from drill import times
    from drill.decks.hints import check_command
    from drill.gc_pause import collector_paused
    from drill.paths import database_path
    from drill.review.due import deck_index, due_counts
    from drill.review.queue import planned_review_day
    from drill.settings import load_settings
    from storage.snapshot import read_snapshot

    settings = load_settings()
    with collector_paused():  # every card and schedule row becomes objects (issue 40)
        decks = deck_index(args.decks)  # the deck cache as data when fresh: no models
        snapshot = read_snapshot(database_path())
    if snapshot is None:  # an older schema: migrate it, then read
        from storage.migrations import migrate_file

        migrate_file(database_path())
        snapshot = read_snapshot(database_path())
        if snapshot is None:
            raise DrillError(f"cannot read the database {database_path()}")
    now = times.utc_now()  # the app's one wall clock (a test sets it there)
    day = planned_review_day(now, settings, snapshot, decks)  # the interview plan too
    summaries, total = due_counts(decks.outline(), snapshot.schedules, now, day)
    if args.json:
        payload = {"decks": [s.as_json() for s in summaries], "totals": total}
        print(json.dumps(payload, indent=2))
        return 0
    for s in summaries:
        nxt = s.next_due.astimezone().strftime("%Y-%m-%d %H:%M") if s.next_due else "-"
        say(f"{s.deck_id:<24} due {s.due:>4}  new {s.new:>4}  next {nxt}")
    say(f"{'total':<24} due {total['due']:>4}  new {total['new']:>4}")
    for path in decks.invalid_paths:
        say(f"skipped invalid deck: {path} (see: {check_command([path])})", file=sys.stderr)
    if snapshot.notice:
        say(f"drill: {snapshot.notice}", file=sys.stderr)
    return 0


def run_tui(args: argparse.Namespace) -> int:
    from drill.tui.app import run_app

    result = run_app(args)
    return result if isinstance(result, int) else 0


# --- entry point -------------------------------------------------------------------------------
def _storage_error_types() -> tuple[type[BaseException], ...]:
    # storage.db imports sqlmodel; only look for its error type if it was imported anyway.
    module = sys.modules.get("storage.errors")
    return (module.DatabaseError,) if module is not None else ()


def _check_home() -> None:
    """DrillError when DRILL_HOME (or the default data dir) exists but is not a directory, or
    sits under a file: every command would fail on it later with a less clear message."""
    from drill.paths import drill_home

    home = drill_home()
    for folder in (home, *home.parents):
        if folder.exists():
            if not folder.is_dir():
                which = "DRILL_HOME" if os.environ.get("DRILL_HOME") else "the data directory"
                cause = "" if folder == home else f" ({folder} is not a directory)"
                raise DrillError(
                    f"{which} {home} is not a directory{cause}; point DRILL_HOME at a directory"
                )
            return


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "func", None)
    signals.reset()
    status = _run(handler, args)
    stopped = signals.stopped_by()
    if stopped is None or handler is None:  # the TUI: Textual handles its own signals
        return status
    if status != signals.exit_status(stopped):
        say(f"drill: stopped by {signal.Signals(stopped).name}", file=sys.stderr)
    return signals.exit_status(stopped)  # one rule, whatever the command made of the signal


def _configure_retention() -> None:
    """keep_runs from settings.toml for the pruning after each run (drill.runs.retention); a
    settings file that cannot be read leaves the default (a command that reads the settings
    reports the problem)."""
    from drill.runs import retention
    from drill.settings import load_settings

    try:
        retention.configure(load_settings().keep_runs)
    except DrillError:
        retention.configure(retention.DEFAULT_KEEP)


def _run(handler: Callable[[argparse.Namespace], int] | None, args: argparse.Namespace) -> int:
    """Run the command (or the TUI); its exit status, every error as one line on stderr."""
    try:
        _check_home()
        _configure_retention()
        if handler is None:
            return int(run_tui(args) or 0)
        with signals.signals_unwind():
            return int(handler(args) or 0)
    except Terminated as stopped:
        say(f"drill: stopped by {signal.Signals(stopped.signum).name}", file=sys.stderr)
        return signals.exit_status(stopped.signum)
    except KeyboardInterrupt:
        say("drill: interrupted", file=sys.stderr)
        return signals.exit_status(signal.SIGINT)
    except BrokenPipeError:
        return 0  # e.g. `drill due | head -1`
    except DrillError as error:
        say(f"drill: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the file system refused (permission, read-only, full, not a dir)
        if os.environ.get("DRILL_DEBUG") == "1":
            raise
        where = f"{error.filename}: " if error.filename else ""
        say(f"drill: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except Exception as error:
        if os.environ.get("DRILL_DEBUG") == "1":
            raise
        if isinstance(error, _storage_error_types()):
            say(f"drill: error: {error}", file=sys.stderr)
            return 2
        kind = type(error).__name__
        say(
            f"drill: unexpected error: {kind}: {error} (run with DRILL_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
