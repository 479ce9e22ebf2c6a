"""`drill runs prune [--keep N] [--dry-run]`: remove old run folders (drill.runs.retention).

Plugs into drill/cli/main.py through `register(subparsers)`; the handler returns the exit
status: 0 done, 1 when a folder could not be removed (one line each on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from drill.cli.output import say
from drill.text import printable

PRUNE_DESCRIPTION = """\
Remove old run folders: of each kind of run (one lab's runs in DRILL_HOME/runs, verify's runs
of one lab and cache key in runs/verify, one exercise's checks in exercises/NAME/checks) the
newest N stay. A folder is never removed while its run is in progress (its run log row says
running, or it changed in the last hour), nor when it holds the newest result of its lab,
params and world size (the Labs screen and verify's cache read it). A coding round's
gradings belong to the round and stay.

drill does the same after every run, with N = keep_runs from settings.toml (default 10;
0 keeps every run). Prints each folder removed with its size, then the bytes freed."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs",
        help="remove old run folders (drill runs prune)",
        description="Look after the run folders under DRILL_HOME.",
    )
    parser.set_defaults(func=lambda _args: _usage(parser))
    sub = parser.add_subparsers(dest="runs_command", metavar="{prune}", parser_class=type(parser))
    prune = sub.add_parser(
        "prune",
        help="remove all but the newest N run folders of each kind",
        description=PRUNE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prune.add_argument(
        "--keep",
        type=_at_least_one,
        metavar="N",
        help="run folders kept per kind (default: keep_runs from settings.toml)",
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="list what would be removed; remove nothing"
    )
    prune.set_defaults(func=cmd_prune)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"keep at least 1 run of each kind, got {value}")
    return value


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    scaled, unit = count / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if scaled < 1024:
            break
        scaled, unit = scaled / 1024, bigger
    return f"{scaled:.1f} {unit}"


def _retained() -> set[str]:
    """The folders the run log still needs (none without a database)."""
    from drill.database import open_app_database
    from drill.paths import database_path

    if not database_path().exists():
        return set()
    db = open_app_database()
    try:
        return db.runs.retained_dirs()
    finally:
        db.close()


def cmd_prune(args: argparse.Namespace) -> int:
    from drill.paths import drill_home
    from drill.runs import retention
    from drill.settings import load_settings

    keep = args.keep if args.keep is not None else load_settings().keep_runs
    if keep == 0:
        say("keep_runs = 0 in settings.toml: every run is kept (give --keep N to prune)")
        return 0
    pruned = retention.prune(
        retention.run_roots(drill_home()), keep, _retained(), dry_run=args.dry_run
    )
    verb = "would remove" if args.dry_run else "removed"
    for folder, size in pruned.removed:
        say(f"{verb} {printable(str(folder))} ({_size(size)})")
    for line in pruned.failed:
        say(f"drill runs: not removed: {printable(line)}", file=sys.stderr)
    dry = args.dry_run
    removed, freed = ("would be removed", "would be freed") if dry else ("removed", "freed")
    say(
        f"{len(pruned.removed)} run folder(s) {removed}, {_size(pruned.bytes_freed)} {freed}; "
        f"{pruned.kept} kept (newest {keep} of each kind, and those in use)"
    )
    return 1 if pruned.failed else 0
