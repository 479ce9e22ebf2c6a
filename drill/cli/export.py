"""`drill export anki|csv`: decks as an Anki package, the review log as CSV for the FSRS tools.

Plugs into drill/cli/main.py through `register(subparsers)`; handlers return the exit status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli.options import add_decks_option
from drill.cli.output import say

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet

DESCRIPTION = """\
Export decks to Anki, or the review log for the FSRS tools.

  drill export anki [--deck D] OUT.apkg   an Anki package: one Anki deck per drill deck
  drill export csv [--deck D] OUT.csv     the review log, one row per review (OUT "-": stdout)

OUT is a new path or a regular file (replaced whole, never half-written); a symlink to a
regular file writes that file. A directory, a device, a FIFO or a socket is refused."""

EPILOG = """\
exit status:
  0  written
  1  nothing to export (no cards, or an empty review log); no file is written
  2  a usage error: unknown deck (the valid ones are listed), OUT cannot be written (a
     directory, a device, a FIFO, a missing directory, no permission, a full disk), or
     "-" for an Anki package"""

ANKI_DESCRIPTION = """\
Write decks (default: all loaded decks) to OUT as an Anki package (.apkg). Each drill deck
becomes the Anki deck drill::<deck>; front, back and the longer explanation are Markdown
rendered to HTML; tags are kept. Note ids come from card ids, so importing a later export into
Anki updates the notes instead of duplicating them. Review history is not exported."""

CSV_DESCRIPTION = """\
Write the review log to OUT as CSV with the columns the FSRS optimizers read (fsrs-optimizer,
fsrs-rs): card_id, review_time (ms since the Unix epoch, UTC), review_rating (1 Again, 2 Hard,
3 Good, 4 Easy), review_state (before the review: 0 New, 1 Learning, 2 Review, 3 Relearning),
review_duration (ms). Oldest review first."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export decks to Anki (.apkg) or the review log to CSV",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=lambda _args: _usage(parser))
    sub = parser.add_subparsers(
        dest="export_command", metavar="{anki,csv}", parser_class=type(parser)
    )
    for name, help_text, description, default_name in (
        ("anki", "decks as an Anki package", ANKI_DESCRIPTION, "OUT.apkg"),
        ("csv", "the review log as CSV", CSV_DESCRIPTION, "OUT.csv"),
    ):
        command = sub.add_parser(
            name,
            help=help_text,
            description=description,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_argument(
            "--deck",
            action="append",
            metavar="D",
            help="only deck D (a deck id, see `drill decks list`); repeatable",
        )
        add_decks_option(command)
        command.add_argument(
            "out",
            type=Path,
            metavar=default_name,
            help="the file to write" + (' ("-": standard output)' if name == "csv" else ""),
        )
        command.set_defaults(func=cmd_export_anki if name == "anki" else cmd_export_csv)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _chosen_decks(args: argparse.Namespace, loaded: DeckSet | None = None) -> list[Any]:
    """The decks named by --deck (all without it) of `loaded` (default: load them, without
    the database: an Anki export needs none); DrillError naming the valid ids."""
    from drill.decks.hints import check_command
    from drill.decks.loader import load_decks
    from drill.errors import DrillError

    if loaded is None:
        loaded = load_decks(getattr(args, "decks", None) or [])
    for path in loaded.invalid_paths:
        say(f"skipped invalid deck: {path} (see: {check_command([path])})", file=sys.stderr)
    decks = [d.deck for d in loaded.decks]
    if not args.deck:
        return decks
    known = {deck.deck: deck for deck in decks}
    unknown = [name for name in args.deck if name not in known]
    if unknown:
        valid = ", ".join(sorted(known)) or "none loaded"
        raise DrillError(f"unknown deck {unknown[0]!r} (valid: {valid})")
    return [known[name] for name in dict.fromkeys(args.deck)]


def cmd_export_anki(args: argparse.Namespace) -> int:
    from drill.review.export_anki import write_apkg
    from drill.review.export_target import check_target, refuse_stdout

    refuse_stdout(args.out, "an Anki package")
    check_target(args.out)  # before the work: a device or a directory is refused up front
    from drill.decks.loader import load_decks

    loaded = load_decks(getattr(args, "decks", None) or [])
    decks = _chosen_decks(args, loaded)
    if not any(deck.cards for deck in decks):
        say("drill: nothing to export: no cards in the chosen decks", file=sys.stderr)
        return 1
    out, notes = write_apkg(
        decks,
        args.out,
        media_dirs={d.deck.deck: d.path.parent for d in loaded.decks},  # images: by deck file
        warn=lambda line: say(f"drill: warning: {line}", file=sys.stderr),
    )
    say(f"wrote {out}: {notes} notes in {len(decks)} deck(s) (drill::<deck> in Anki)")
    return 0


def cmd_export_csv(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.review.export_csv import NothingToExport, write_revlog_csv
    from drill.review.export_target import check_target, is_stdout
    from drill.review.review_log import read_review_log_counted

    if not is_stdout(args.out):
        check_target(args.out)
    with open_services(args) as services:
        chosen = _chosen_decks(args, services.decks) if args.deck else None
        deck_ids = {deck.deck for deck in chosen} if chosen is not None else None
        reviews, damaged = read_review_log_counted(services.db, deck_ids)
    if damaged:
        say(
            f"drill: skipped {damaged} review(s) holding values drill never writes "
            "(see: drill db check)",
            file=sys.stderr,
        )
    try:
        out = write_revlog_csv(reviews, args.out)
    except NothingToExport as error:
        scope = f" of deck(s) {', '.join(sorted(deck_ids))}" if deck_ids else ""
        say(f"drill: {error}{scope}", file=sys.stderr)
        return 1
    where = "standard output" if is_stdout(out) else out
    say(f"wrote {where}: {len(reviews)} reviews", file=sys.stderr if is_stdout(out) else None)
    return 0
