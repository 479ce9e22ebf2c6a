"""Decks as an Anki package (.apkg, written with genanki): one Anki deck per drill deck, named
`drill::<deck id>`; card Markdown rendered to HTML (markdown-it-py, raw HTML in a deck escaped:
deck files are untrusted; the deck description, which Anki also renders as HTML, is the deck's
title HTML-escaped); tags kept (spaces become `_`, Anki splits tags on spaces). Note GUIDs,
the note type id and deck ids derive from stable names and card ids, so importing a re-export
updates the notes instead of adding copies."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from drill.review.export_target import write_atomically
from drill.text import printable

if TYPE_CHECKING:
    from drill.decks.models import Card, Deck

DECK_PREFIX = "drill::"
MODEL_NAME = "drill card"
FIELDS = ("Front", "Back", "More", "DrillId")
FRONT = "<div class=front>{{Front}}</div>"
BACK = (
    "{{FrontSide}}<hr id=answer><div class=back>{{Back}}</div>"
    "{{#More}}<hr><div class=more>{{More}}</div>{{/More}}"
)
CSS = ".card { font-family: sans-serif; font-size: 18px; text-align: left; } .more { opacity: .8; }"


def stable_id(name: str) -> int:
    """A 31-bit id in genanki's recommended range (1<<30 .. 1<<31) derived from `name`."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    return (1 << 30) + digest % (1 << 30)


def note_guid(card_id: str) -> str:
    return _guid_for(f"drill-card:{card_id}")


def _guid_for(value: str) -> str:
    import genanki

    return str(genanki.guid_for(value))


def anki_tag(tag: str) -> str:
    return re.sub(r"\s+", "_", tag.strip())


def html_text(text: str) -> str:
    """Plain text for a place Anki renders as HTML: escaped, control characters replaced."""
    return html.escape(printable(text))


def render_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(text)).strip()


def _model():  # type: ignore[no-untyped-def]
    import genanki

    return genanki.Model(
        stable_id(f"{MODEL_NAME} v1"),
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[{"name": "Card 1", "qfmt": FRONT, "afmt": BACK}],
        css=CSS,
    )


def _note(model, card: Card):  # type: ignore[no-untyped-def]
    import genanki

    fields = [
        render_markdown(card.front),
        render_markdown(card.back),
        render_markdown(card.more) if card.more.strip() else "",
        html_text(card.id),
    ]
    tags = [t for t in (anki_tag(tag) for tag in card.tags) if t]
    return genanki.Note(model=model, fields=fields, tags=tags, guid=note_guid(card.id))


def write_apkg(
    decks: Sequence[Deck], out: Path, *, timestamp: float | None = None
) -> tuple[Path, int]:
    """Write `decks` to `out` as one .apkg (atomically). Returns (out, number of notes).
    `timestamp` (default now) is the notes' modification time: Anki updates a note on import
    only when the package's note is newer than its own copy."""
    import genanki

    model = _model()
    anki_decks = []
    notes = 0
    for deck in decks:
        name = DECK_PREFIX + deck.deck
        description = html_text(deck.title)  # Anki shows a deck's description as HTML
        anki_deck = genanki.Deck(stable_id(f"deck:{deck.deck}"), name, description=description)
        for card in deck.cards:
            anki_deck.add_note(_note(model, card))
            notes += 1
        anki_decks.append(anki_deck)
    package = genanki.Package(anki_decks)
    return write_atomically(out, lambda path: package.write_to_file(str(path), timestamp)), notes
