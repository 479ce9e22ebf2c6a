"""Decks as an Anki package (.apkg, written with genanki): one Anki deck per drill deck, named
`drill::<deck id>`; card Markdown rendered to HTML (markdown-it-py, raw HTML in a deck escaped:
deck files are untrusted; the deck description, which Anki also renders as HTML, is the deck's
title HTML-escaped); tags kept (spaces become `_`, Anki splits tags on spaces). Note GUIDs,
the note type id and deck ids derive from stable names and card ids, so importing a re-export
updates the notes instead of adding copies."""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import re
import secrets
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from drill.decks.numbers import fixed_instance, shown_back, shown_text
from drill.files import FileRefused, read_regular
from drill.review.export_target import write_atomically
from drill.text import printable

if TYPE_CHECKING:
    from markdown_it.token import Token

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


MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
MEDIA_MAX_BYTES = 20 * 1024 * 1024
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


@dataclass
class Media:
    """Images the cards reference, gathered while rendering: files under `base` (the deck
    file's directory) go into the package under a name made from their content; anything
    else (missing, outside `base`, not a regular file, too large) is a warning naming it."""

    base: Path | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # name in the package -> content
    warnings: list[str] = field(default_factory=list)
    where: str = ""  # the card being rendered, for the warnings

    def add(self, src: str) -> str | None:
        """The package's name for image `src`, or None (and a warning) when it cannot go in."""
        if self.base is None:
            self.warnings.append(f"image {printable(src)!r}{self.where}: no deck directory")
            return None
        base = self.base.resolve()
        path = (base / unquote(src)).resolve()
        if not path.is_relative_to(base):
            self.warnings.append(
                f"image {printable(src)!r}{self.where}: outside the deck's directory, left out"
            )
            return None
        try:
            data = read_regular(path, MEDIA_MAX_BYTES)
        except FileNotFoundError:
            self.warnings.append(f"image not found: {printable(src)!r}{self.where}")
            return None
        except (FileRefused, OSError) as error:
            self.warnings.append(f"image {printable(src)!r}{self.where}: {printable(str(error))}")
            return None
        name = f"drill-{hashlib.sha256(data).hexdigest()[:16]}{path.suffix.lower()[:10]}"
        self.files[name] = data
        return name


def render_markdown(text: str, media: Media | None = None) -> str:
    """Card Markdown as HTML for Anki. Math `\\(..\\)` and `\\[..\\]` reaches Anki as MathJax
    delimiters: it is set aside before CommonMark (which would take `\\(` for an escaped
    parenthesis) and put back, HTML-escaped, afterwards. Image sources become the package's
    media names (see Media); without `media`, images are left as written."""
    from markdown_it import MarkdownIt

    nonce = secrets.token_hex(8)
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"drillmath{nonce}x{len(spans) - 1}x"

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(MATH.sub(hold, text))
    if media is not None:
        _rewrite_images(tokens, media)
    rendered = str(md.renderer.render(tokens, md.options, {})).strip()
    return re.sub(
        rf"drillmath{nonce}x(\d+)x", lambda m: html.escape(spans[int(m.group(1))]), rendered
    )


def _rewrite_images(tokens: Sequence[Token], media: Media) -> None:
    for token in tokens:
        if token.children:
            _rewrite_images(token.children, media)
        if token.type != "image":
            continue
        src = str(token.attrGet("src") or "")
        if not src or _SCHEME.match(src):
            continue  # a URL (or data:) is Anki's to fetch, as it would be in a note
        name = media.add(src)
        if name is not None:
            token.attrSet("src", name)


def _model():  # type: ignore[no-untyped-def]
    import genanki

    return genanki.Model(
        stable_id(f"{MODEL_NAME} v1"),
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[{"name": "Card 1", "qfmt": FRONT, "afmt": BACK}],
        css=CSS,
    )


def _note(model, card: Card, media: Media):  # type: ignore[no-untyped-def]
    import genanki

    media.where = f" (card {printable(card.id)})"
    fixed = fixed_instance(card)  # a numbers card exports one fixed drawing
    fields = [
        render_markdown(shown_text(card.front, fixed), media),
        render_markdown(shown_back(card.back, fixed), media),
        render_markdown(shown_text(card.more, fixed), media) if card.more.strip() else "",
        html_text(card.id),
    ]
    tags = [t for t in (anki_tag(tag) for tag in card.tags) if t]
    return genanki.Note(model=model, fields=fields, tags=tags, guid=note_guid(card.id))


def write_apkg(
    decks: Sequence[Deck],
    out: Path,
    *,
    timestamp: float | None = None,
    media_dirs: Mapping[str, Path] | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Path, int]:
    """Write `decks` to `out` as one .apkg (atomically). Returns (out, number of notes).
    `timestamp` (default now) is the notes' modification time: Anki updates a note on import
    only when the package's note is newer than its own copy. Images the cards reference are
    read from `media_dirs[deck id]` (the deck file's directory) into the package's media;
    each one that cannot be (missing, outside that directory) is passed to `warn`."""
    import genanki

    model = _model()
    anki_decks = []
    notes = 0
    media_files: dict[str, bytes] = {}
    for deck in decks:
        name = DECK_PREFIX + deck.deck
        description = html_text(deck.title)  # Anki shows a deck's description as HTML
        anki_deck = genanki.Deck(stable_id(f"deck:{deck.deck}"), name, description=description)
        media = Media(base=(media_dirs or {}).get(deck.deck))
        for card in deck.cards:
            anki_deck.add_note(_note(model, card, media))
            notes += 1
        media_files.update(media.files)
        for warning in media.warnings:
            (warn or (lambda _line: None))(f"{printable(deck.deck)}: {warning}")
        anki_decks.append(anki_deck)
    package = genanki.Package(anki_decks)
    moment = time.time() if timestamp is None else timestamp
    written = write_atomically(out, lambda path: _write_package(package, path, moment, media_files))
    return written, notes


def _write_package(package: Any, path: Path, timestamp: float, media: Mapping[str, bytes]) -> None:
    """The .apkg layout genanki's Package.write_to_file writes (collection.anki2, a `media` map
    of numbered files), with its collection database in a private temporary directory that is
    removed however this ends: genanki's own mkstemp file is never deleted."""
    with tempfile.TemporaryDirectory(prefix="drill-anki-") as work:
        collection = Path(work) / "collection.anki2"
        conn = sqlite3.connect(collection)
        try:
            package.write_to_db(conn.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
            conn.commit()
        finally:
            conn.close()
        names = sorted(media)
        with zipfile.ZipFile(path, "w") as archive:
            archive.write(collection, "collection.anki2")
            archive.writestr("media", json.dumps({str(i): name for i, name in enumerate(names)}))
            for index, name in enumerate(names):
                archive.writestr(str(index), media[name])
