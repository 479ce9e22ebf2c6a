"""`drill db check|backup|restore`: look after the database file (DRILL_HOME/drill.sqlite3).

Plugs into drill/cli/main.py through `register(subparsers)`. Handlers return the exit status:
check exits 0 when sound and 1 with one line per problem; a failed backup or restore raises
DrillError (one line, exit 2). Stdlib only (no sqlmodel): storage.integrity and storage.backup.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from drill.cli.output import say
from drill.errors import DrillError
from drill.paths import database_path

DESCRIPTION = """\
Check, back up or restore the database (card states and the review log, mock rounds, lab runs).
drill keeps the last 7 daily automatic backups in DRILL_HOME/backups/."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "db",
        help="check, back up or restore the database",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=lambda _args: _usage(parser))
    sub = parser.add_subparsers(
        dest="db_command", metavar="{check,backup,restore}", parser_class=type(parser)
    )
    check = sub.add_parser(
        "check",
        help="run SQLite's integrity check and compare the schema",
        description="Run SQLite's integrity and foreign-key checks and compare the tables with "
        "the schema of the database's version. Exit 0 when sound; 1 with one line per problem.",
    )
    check.set_defaults(func=cmd_db_check)
    backup = sub.add_parser(
        "backup",
        help="copy the database to OUT (default: DRILL_HOME/backups/)",
        description="Write a consistent copy of the database (safe while drill runs) to OUT: a "
        "new file, or a directory to put a timestamped copy in. Default: DRILL_HOME/backups/.",
    )
    backup.add_argument("out", nargs="?", type=Path, metavar="OUT", help="file or directory")
    backup.set_defaults(func=cmd_db_backup)
    restore = sub.add_parser(
        "restore",
        help="replace the database with a backup FILE",
        description="Replace the database with FILE after checking that FILE is a sound drill "
        "database of a known schema version. The current database is first copied to "
        "DRILL_HOME/backups/ (drill-...-before-restore.sqlite3).",
    )
    restore.add_argument("file", type=Path, metavar="FILE", help="a drill database backup")
    restore.set_defaults(func=cmd_db_restore)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_db_check(_args: argparse.Namespace) -> int:
    from storage.integrity import check_database
    from storage.migrations import LATEST_VERSION

    path = database_path()
    if not path.exists():
        say(f"ok: no database yet at {path}")
        return 0
    version, problems = check_database(path)
    for problem in problems:
        say(f"{path}: {problem}")
    if problems:
        return 1
    note = "" if version == LATEST_VERSION else f" (migrated to {LATEST_VERSION} on next open)"
    say(f"ok: {path}: integrity ok, schema version {version}{note}")
    return 0


def cmd_db_backup(args: argparse.Namespace) -> int:
    from drill.files import require_parent_dir
    from storage.backup import backup_database
    from storage.errors import DatabaseError

    if args.out is not None and not args.out.is_dir():
        require_parent_dir(args.out)
    try:
        written = backup_database(database_path(), args.out, datetime.now(UTC))
    except DatabaseError as error:
        raise DrillError(str(error)) from None
    say(f"backed up {database_path()} to {written}")
    return 0


def cmd_db_restore(args: argparse.Namespace) -> int:
    from storage.backup import restore_database
    from storage.errors import DatabaseError

    path = database_path()
    try:
        saved = restore_database(path, args.file, datetime.now(UTC))
    except DatabaseError as error:
        raise DrillError(str(error)) from None
    say(f"restored {path} from {args.file}")
    if saved is not None:
        say(f"the previous database was kept as {saved}")
    return 0
