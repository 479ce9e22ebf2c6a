"""Options several commands share (one copy of each)."""

from __future__ import annotations

import argparse


def add_decks_option(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """`--decks DIR` (repeatable): extra deck directories. At the top level it defaults to []; on
    a subcommand it is left out of the namespace unless given, so `drill --decks D stats` and
    `drill stats --decks D` both work."""
    parser.add_argument(
        "--decks",
        action="append",
        metavar="DIR",
        default=[] if top else argparse.SUPPRESS,
        help="also load decks from DIR (a directory of *.yaml, or one file); repeatable",
    )
