"""Load and validate YAML decks: bounded YAML (drill.decks.safe_yaml) + the pydantic models.

Problems are reported as `path:line: card <id>: message`. Every problem with a file is a line;
nothing in a deck file makes loading raise or hang. A card with a problem is left out and its
file's other cards load; a file whose top level is wrong (YAML syntax, not a mapping, a bad or
missing deck key, `cards` not a list, a deck id another file has) is skipped whole. The app
names what it left out; `drill decks check` lists every problem.

Link checks (unknown lab, bad params, ...) are passed in by the caller as `link_checks`:
callables `(LoadedDeck) -> list[Problem]` run on every accepted deck (see drill.decks.links).
Their problems are reported (and fail `decks check`) but do not stop the deck from loading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from drill.decks.cache import read_cache, write_cache
from drill.decks.index import (
    DeckIndex,
    DeckOutline,
    DeckPathError,
    FileEntry,
    Problem,
    cached_entry,
    deck_files,
    examine,
    list_deck_dir,
    real_path,
    unique_files,
    unreadable,
)
from drill.decks.models import Card, Deck, LabLink, Numbers, NumberVar, Predict, PredictChoice
from drill.decks.problems import card_lines, child, duplicate_keys, node_line, validation_problems
from drill.decks.safe_yaml import YamlProblem, read_yaml

__all__ = [
    "DeckOutline",
    "DeckPathError",
    "DeckSet",
    "LinkCheck",
    "LoadedDeck",
    "Problem",
    "check_files",
    "check_paths",
    "given_files",
    "load_decks",
    "parse_file",
]


@dataclass
class LoadedDeck:
    deck: Deck
    path: Path
    card_lines: dict[str, int] = field(default_factory=dict)  # card id -> line of its mapping
    field_lines: dict[str, dict[str, int]] = field(default_factory=dict)  # id -> key -> line

    def line_of(self, card_id: str, key: str | None = None) -> int:
        """Line of a card (or of one of its top-level keys, e.g. 'lab'), for link problems."""
        if key is not None and key in self.field_lines.get(card_id, {}):
            return self.field_lines[card_id][key]
        return self.card_lines.get(card_id, 1)


LinkCheck = Callable[[LoadedDeck], list[Problem]]


@dataclass
class DeckSet:
    decks: list[LoadedDeck]
    problems: list[Problem]
    invalid_paths: list[Path] = field(default_factory=list)
    index: DeckIndex | None = None  # the same decks as plain data (for the first-paint path)

    def __post_init__(self) -> None:
        self._cards: dict[str, tuple[Card, str]] = {
            card.id: (card, loaded.deck.deck) for loaded in self.decks for card in loaded.deck.cards
        }

    def card(self, card_id: str) -> Card | None:
        found = self._cards.get(card_id)
        return None if found is None else found[0]

    def deck_of(self, card_id: str) -> str:
        """Deck id of a card; KeyError for an unknown card."""
        return self._cards[card_id][1]

    def deck(self, deck_id: str) -> LoadedDeck | None:
        return next((d for d in self.decks if d.deck.deck == deck_id), None)

    def outline(self) -> list[DeckOutline]:
        return [
            DeckOutline(d.deck.deck, d.deck.title, tuple(c.id for c in d.deck.cards))
            for d in self.decks
        ]


# --- parsing one file --------------------------------------------------------------------------
def _decode(path: Path, raw: bytes) -> str | Problem:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        byte = raw[error.start : error.start + 1].hex()
        return Problem(path, line, None, f"not UTF-8 text (byte 0x{byte}); save it as UTF-8")


def parse_file(path: Path) -> FileEntry:
    """Validate one deck file; never raises for bad content (problems go in the entry)."""
    key = examine(path)
    if isinstance(key, str):
        return unreadable(path, key)
    try:
        with path.open("rb") as handle:
            raw = handle.read(key[2] + 1)
    except OSError as error:
        return unreadable(path, f"cannot read: {error.strerror or error}")
    if len(raw) != key[2]:
        return unreadable(path, "changed while it was read; try again")
    text = _decode(path, raw)
    if isinstance(text, Problem):
        return FileEntry(path, key, None, [text])

    def failed(problems: list[Problem]) -> FileEntry:
        return FileEntry(path, key, None, sorted(problems, key=lambda p: p.line))

    try:
        root, data = read_yaml(text)
    except YamlProblem as error:
        return failed([Problem(path, error.line, None, error.message)])
    if root is None or not isinstance(data, dict):
        line = node_line(root) if root is not None else 1
        message = "a deck must be a mapping with deck, title, cards"
        return failed([Problem(path, line, None, message)])

    deck, problems, lines, field_lines = _validate(path, root, data)
    if deck is None:
        return failed(problems)
    deck_key, _ = child(root, "deck")
    return FileEntry(
        path,
        key,
        deck.model_dump(mode="json"),
        sorted(problems, key=lambda p: p.line),
        deck_line=node_line(deck_key) if deck_key is not None else 1,
        card_lines={card.id: lines.get(card.id, 1) for card in deck.cards},
        field_lines={card.id: field_lines.get(card.id, {}) for card in deck.cards},
        hashes={card.id: card.content_hash() for card in deck.cards},
    )


def _validate(
    path: Path, root: yaml.Node, data: dict[str, Any]
) -> tuple[Deck | None, list[Problem], dict[str, int], dict[str, dict[str, int]]]:
    """(deck of the valid cards, problems, card lines, key lines). A card with a problem is
    left out and named; a problem outside the cards (the deck's own keys, `cards` not a list)
    leaves no deck."""
    _, cards_node = child(root, "cards")
    raw_cards = data.get("cards", [])
    card_nodes = cards_node.value if isinstance(cards_node, yaml.SequenceNode) else []
    per_card = isinstance(raw_cards, list) and len(raw_cards) == len(card_nodes)
    card_dups = [duplicate_keys(node) for node in card_nodes] if per_card else []
    inside = {found for dups in card_dups for found in dups}
    problems = [  # the cards' own keys were looked at above: the walk leaves them out
        Problem(path, n, None, f"duplicate key '{k}'")
        for n, k in duplicate_keys(root, skip=card_nodes if per_card else ())
        if (n, k) not in inside
    ]
    lines, field_lines, repeated = card_lines(path, root)
    deck: Deck | None = None
    try:  # the deck's own keys; the cards one by one below
        deck = Deck.model_validate({**data, "cards": []} if per_card else data)
    except ValidationError as error:
        problems.extend(validation_problems(path, root, data, error))
    if deck is None or problems or not per_card:
        problems += repeated.values()
        return None if problems else deck, problems, lines, field_lines
    cards: list[Card] = []
    for index, raw in enumerate(raw_cards):
        found = [
            Problem(path, n, _card_id(raw), f"duplicate key '{k}'") for n, k in card_dups[index]
        ]
        try:
            card = Card.model_validate(raw)
        except ValidationError as error:
            found.extend(validation_problems(path, root, data, error, at=("cards", index)))
        if index in repeated:
            found.append(repeated[index])
        if found:
            problems.extend(found)
        else:
            cards.append(card)
    return deck.model_copy(update={"cards": cards}), problems, lines, field_lines


def _card_id(raw: Any) -> str | None:
    card_id = raw.get("id") if isinstance(raw, dict) else None
    return card_id if isinstance(card_id, str) and card_id.strip() else None


# --- loading -----------------------------------------------------------------------------------
def _entries(paths: list[Path], use_cache: bool) -> list[FileEntry]:
    cache = read_cache() if use_cache else {}
    entries: list[FileEntry] = []
    changed = False
    for path in paths:
        key = examine(path)
        entry = cached_entry(cache, path, key) if use_cache and not isinstance(key, str) else None
        if entry is None:
            entry = parse_file(path)
            if entry.key is not None:
                cache[real_path(path)] = entry.to_data()
                changed = True
        entries.append(entry)
    if use_cache and changed:
        write_cache({k: v for k, v in cache.items() if Path(k).exists()})
    return entries


def _rebuild(data: dict[str, Any]) -> Deck:
    """A Deck from data that already passed validation (the cache is keyed by the deck schema
    version and shape-checked): model_construct skips re-validating, ~10x faster."""
    cards = []
    for raw in data["cards"]:
        card = dict(raw)
        if card.get("lab") is not None:
            card["lab"] = LabLink.model_construct(**card["lab"])
        if card.get("predict") is not None:
            predict = dict(card["predict"])
            predict["choices"] = [PredictChoice.model_construct(**c) for c in predict["choices"]]
            card["predict"] = Predict.model_construct(**predict)
        if card.get("numbers") is not None:
            numbers = dict(card["numbers"])
            numbers["vars"] = {
                k: NumberVar.model_construct(**v) for k, v in numbers["vars"].items()
            }
            card["numbers"] = Numbers.model_construct(**numbers)
        cards.append(Card.model_construct(**card))
    return Deck.model_construct(**{**data, "cards": cards})


def _build(
    entries: list[FileEntry], link_checks: Sequence[LinkCheck], report: set[str] | None = None
) -> DeckSet:
    """Assemble entries into a DeckSet; with `report`, only problems and decks of those real
    paths are kept (the other entries are context: they own ids first)."""
    index = DeckIndex.of(entries)
    loaded = [
        LoadedDeck(_rebuild(e.deck), e.path, e.card_lines, e.field_lines)  # type: ignore[arg-type]
        for e in index.entries
    ]
    problems = list(index.problems)
    invalid = list(index.invalid_paths)
    if report is not None:
        loaded = [d for d in loaded if real_path(d.path) in report]
        problems = [p for p in problems if real_path(p.path) in report]
        invalid = [p for p in invalid if real_path(p) in report]
    for check in link_checks:
        for deck in loaded:
            problems.extend(check(deck))
    return DeckSet(loaded, problems, invalid, index)


def load_decks(
    extra_dirs: Iterable[str | Path] | None = None,
    include_bundled: bool = True,
    *,
    use_cache: bool = True,
    link_checks: Sequence[LinkCheck] = (),
) -> DeckSet:
    """Bundled decks plus user decks (--decks dirs, then DRILL_DECKS). Invalid files are left out
    and listed in `invalid_paths`; every problem is in `problems`. Raises DeckPathError when a
    given deck directory does not exist."""
    return _build(_entries(deck_files(extra_dirs, include_bundled), use_cache), link_checks)


def given_files(paths: Iterable[str | Path]) -> list[Path]:
    """Deck files named on the command line: files as given, directories listed."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(list_deck_dir(path))
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise DeckPathError(f"no such deck file or directory: {path}")
    return unique_files(files)


def check_files(
    files: Sequence[Path],
    *,
    context: Iterable[Path] = (),
    link_checks: Sequence[LinkCheck] = (),
) -> DeckSet:
    """Validate deck files from scratch. `context` files (the bundled and configured decks, as
    the app loads them) are loaded first, so a deck id or card id that collides with one of
    theirs is a problem of the checked file; only the checked files' problems and decks are
    returned."""
    checked = {real_path(p) for p in files}
    before = [p for p in context if real_path(p) not in checked]
    entries = _entries(before, use_cache=True) + _entries(list(files), use_cache=False)
    return _build(entries, link_checks, report=checked)


def check_paths(
    paths: Iterable[str | Path],
    *,
    context: Iterable[Path] = (),
    link_checks: Sequence[LinkCheck] = (),
) -> list[Problem]:
    """Problems of the given files and directories (see check_files); [] when all is well."""
    return check_files(given_files(paths), context=context, link_checks=link_checks).problems
