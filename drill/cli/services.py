"""The one place CLI commands get the app's services from (drill.services), as the TUI does.

with open_services(args) as services:
    rows = browse.build_rows(services.decks, services.db.path)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from drill.cli.output import say

if TYPE_CHECKING:
    from drill.services import Services


@contextmanager
def open_services(args: argparse.Namespace) -> Iterator[Services]:
    """Services over the command's decks (bundled, `--decks DIR` when the command has it,
    DRILL_DECKS), the database (created or migrated) and settings.toml; closed afterwards.
    Notices from the load (history moved to renamed cards) go to stderr."""
    from drill.services import load_services

    deck_dirs = [Path(d) for d in getattr(args, "decks", None) or []]
    services = load_services(deck_dirs)
    try:
        for notice in services.notices:
            say(f"drill: note: {notice}", file=sys.stderr)
        yield services
    finally:
        services.close()
