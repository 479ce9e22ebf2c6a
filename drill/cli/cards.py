"""`drill cards [QUERY] [--json]`: search cards with the browser's query language.

Plugs into drill/cli/main.py through `register(subparsers)`. The query is the words given,
joined (quote phrases for the shell: drill cards 'tag:fsdp "optimizer state"'). A bad term
is a usage error (one line, exit 2) naming what to write instead.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from drill.cli.options import add_decks_option
from drill.cli.output import say
from drill.errors import DrillError

DESCRIPTION = """\
Search cards: free words (all must appear in front, back, tags, deck, level or state),
"quoted phrases", tag:NAME, level:easy|medium|hard, deck:NAME (part of the id or title),
is:due|new|suspended|buried|leech|learning|young|mature. Every term must match.
A numbers card is shown with one fixed drawing of its values (seed 0, as the Anki export),
followed by a line with the ranges each review draws from.
A leading - negates a term (-tag:fsdp -is:suspended); give such terms after --:
drill cards -- -tag:fsdp, or inside one quoted query: drill cards 'tag:ddp -is:new'."""


class QueryError(DrillError):
    """A query term drill cannot read."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cards",
        help='search cards (tag:, level:, deck:, is:, words, "phrases")',
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("query", nargs="*", metavar="QUERY", help="query terms")
    parser.add_argument("--json", action="store_true", help="print the matches as JSON")
    add_decks_option(parser)
    parser.set_defaults(func=cmd_cards)


def cmd_cards(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.review import browse

    text = " ".join(args.query)
    query = browse.parse_query(text)
    if query.hint:
        raise QueryError(f"bad query: {query.hint}")
    with open_services(args) as services:
        rows = browse.build_rows(services.decks, services.db.path)
        day_start_hour = services.settings.day_start_hour
    now = datetime.now(UTC)
    found, _ = browse.search(rows, text, now, day_start_hour=day_start_hour)
    if args.json:
        print(json.dumps([row_json(row, now) for row in found], indent=2))
        return 0
    for row in found:
        flags = row.flags(now)
        front = row.front.splitlines()[0] if row.front else ""
        say(
            f"{row.card_id:<28} {row.deck_id:<20} {row.level:<6} {row.state:<8} "
            f"{flags + ' ' if flags else ''}{front[:60]}"
        )
        if row.numbers_note:
            say(f"    {row.numbers_note}")
    say(f"{len(found)} of {len(rows)} cards")
    return 0


def row_json(row: Any, now: datetime) -> dict[str, Any]:
    return {
        "card": row.card_id,
        "deck": row.deck_id,
        "level": row.level,
        "tags": list(row.tags),
        "state": row.state,
        "due": row.due.isoformat() if row.due else None,
        "suspended": row.suspended,
        "buried": row.is_buried(now),
        "leech": row.leech,
        "lapses": row.lapses,
        "front": row.front,
        "numbers_note": row.numbers_note or None,
        "path": str(row.path) if row.path else None,
        "line": row.line,
    }
