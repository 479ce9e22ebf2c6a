"""The card browser's columns, sized to the terminal.

The Card column is as wide as the longest id where the width allows, the Front takes what is
left, and a narrow terminal drops Level, then Deck, before squeezing the front below
FRONT_MIN. Cells are clipped here with an ellipsis (the table itself pads nothing), so a
long id never runs into the next column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text

from drill.text import printable
from drill.tui.formatting import format_next_due

if TYPE_CHECKING:
    from drill.review.browse import CardRow

GAP = 1  # blank cells after every column but the front
CARD_MIN = 14
FRONT_MIN = 26
DECK_MAX = 14
DROP_ORDER = ("level", "deck")  # dropped first to last when the terminal is narrow
SMALL = (("deck", "Deck"), ("level", "Level"), ("state", "State"), ("due", "Due"),
         ("flags", "Flags"))  # fmt: skip
FIXED = {"level": 6, "state": 8, "due": 8, "flags": 9}  # medium, learning, in 2.1mo, suspended


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # text cells, the gap not included


def layout(width: int, id_width: int, deck_width: int) -> tuple[Column, ...]:
    """Columns for a table `width` cells wide (its scrollbar excluded), given the longest card
    id and deck id among the rows."""
    widths = {**FIXED, "deck": min(max(deck_width, len("Deck")), DECK_MAX)}
    keys = [key for key, _ in SMALL]
    droppable = list(DROP_ORDER)

    def room() -> int:  # for Card and Front together
        return width - sum(widths[k] for k in keys) - GAP * (len(keys) + 1)

    while room() < CARD_MIN + FRONT_MIN and droppable:
        keys.remove(droppable.pop(0))
    card = min(max(id_width, len("Card")), max(CARD_MIN, room() - FRONT_MIN))
    labels = dict(SMALL)
    return (
        Column("card", "Card", card),
        *(Column(k, labels[k], widths[k]) for k in keys),
        Column("front", "Front", max(room() - card, len("Front"))),
    )


def clip(text: str, width: int) -> Text:
    """A cell: outside text as Text (never markup), control characters replaced, cut to
    `width` with an ellipsis."""
    text = printable(text)
    return Text(text if len(text) <= width else text[: width - 1] + "…", no_wrap=True)


def row_cells(row: CardRow, columns: Sequence[Column], now: datetime) -> list[Text]:
    """The row's cells for `columns`, each clipped to its column."""
    values = {
        "card": row.card_id,
        "deck": row.deck_id,
        "level": row.level,
        "state": row.state,
        "due": format_next_due(row.due, now) if row.due and row.state != "new" else "",
        "flags": row.flags(now),
        "front": row.front.splitlines()[0] if row.front else "",
    }
    return [clip(values[c.key], c.width) for c in columns]
