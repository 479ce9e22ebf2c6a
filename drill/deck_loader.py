"""Load and validate YAML decks: yaml (C loader when available) + the pydantic models.

Problems are reported as `path:line: card <id>: message`, with the line taken from the YAML
node tree (the pydantic error location is walked down the composed nodes). A file with any
problem is skipped by the app; `drill decks check` lists every problem.

Link checks (unknown lab, bad params, ...) plug in through LINK_CHECKERS: append a callable
`(LoadedDeck) -> list[Problem]`. They run on every valid deck after loading; their problems are
reported (and fail `decks check`) but do not stop the deck from loading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from drill.deck_cache import (
    DeckOutline,
    DeckPathError,
    FileEntry,
    Problem,
    assemble,
    cached_entry,
    deck_files,
    file_key,
    is_deck_file,
    read_cache,
    write_cache,
)
from drill.deck_models import Card, Deck, LabLink, Predict, PredictChoice

__all__ = [
    "LINK_CHECKERS",
    "DeckOutline",
    "DeckPathError",
    "DeckSet",
    "LoadedDeck",
    "Problem",
    "check_paths",
    "load_decks",
    "parse_file",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


LinkChecker = Callable[[LoadedDeck], list[Problem]]
LINK_CHECKERS: list[LinkChecker] = []


@dataclass
class DeckSet:
    decks: list[LoadedDeck]
    problems: list[Problem]
    invalid_paths: list[Path] = field(default_factory=list)

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

    def all_cards(self) -> list[Card]:
        return [card for loaded in self.decks for card in loaded.deck.cards]

    def deck(self, deck_id: str) -> LoadedDeck | None:
        return next((d for d in self.decks if d.deck.deck == deck_id), None)

    def outline(self) -> list[DeckOutline]:
        return [
            DeckOutline(d.deck.deck, d.deck.title, tuple(c.id for c in d.deck.cards))
            for d in self.decks
        ]


# --- parsing one file --------------------------------------------------------------------------
def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _child(node: yaml.Node, key: Any) -> tuple[yaml.Node | None, yaml.Node | None]:
    """(key node, value node) of a mapping key or sequence index, or (None, None)."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for key_node, value_node in reversed(node.value):  # YAML keeps the last duplicate
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node, value_node
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key], node.value[key]
    return None, None


def _locate(root: yaml.Node, loc: tuple[Any, ...]) -> int:
    """Line of the deepest node a pydantic error location reaches (a key's own line)."""
    node, line = root, _line(root)
    for part in loc:
        key_node, value_node = _child(node, part)
        if value_node is None or key_node is None:
            break
        line = _line(key_node)
        node = value_node
    return line


def _duplicate_keys(node: yaml.Node, found: list[tuple[int, str]]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    found.append((_line(key_node), key_node.value))
                seen.add(key_node.value)
            _duplicate_keys(value_node, found)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _duplicate_keys(item, found)


def _card_label(data: Any, index: int) -> tuple[str | None, str]:
    """(card id, message prefix) for the card at `index` of the raw data."""
    try:
        card_id = data["cards"][index]["id"]
    except (KeyError, IndexError, TypeError):
        card_id = None
    if isinstance(card_id, str) and card_id.strip():
        return card_id, ""
    return None, f"card #{index + 1}: "


def _message(error: dict[str, Any], field_path: str) -> str:
    kind = error["type"]
    if kind == "missing":
        return f"missing field '{field_path}'"
    if kind == "extra_forbidden":
        return f"unknown key '{field_path}'"
    if error.get("input", "") is None and kind.endswith("_type"):
        return f"{field_path}: must not be empty"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field_path}: {message}" if field_path else message


_UNION_TAGS = frozenset({"int", "float", "bool", "str"})


def _validation_problems(
    path: Path, root: yaml.Node, data: Any, error: ValidationError
) -> list[Problem]:
    # A value failing a union (e.g. a lab param) gives one error per member, tagged with the
    # member's name at the end of the location: fold them into one problem.
    grouped: dict[tuple[Any, ...], list[tuple[str | None, dict[str, Any]]]] = {}
    for item in error.errors():
        loc = tuple(item["loc"])
        tag = None
        if len(loc) > 1 and isinstance(loc[-1], str) and loc[-1] in _UNION_TAGS:
            loc, tag = loc[:-1], loc[-1]
        grouped.setdefault(loc, []).append((tag, item))
    problems: list[Problem] = []
    for loc, items in grouped.items():
        card_id, prefix, rest = None, "", loc
        if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
            card_id, prefix = _card_label(data, loc[1])
            rest = loc[2:]
        field_path = ".".join(str(p) for p in rest)
        tags = [tag for tag, _ in items if tag]
        if len(items) > 1 and tags:
            message = f"{field_path}: expected one of {', '.join(tags)}"
        else:
            message = _message(items[0][1], field_path)
        problems.append(Problem(path, _locate(root, loc), card_id, prefix + message))
    return problems


def _card_lines(
    path: Path, root: yaml.Node
) -> tuple[dict[str, int], dict[str, dict[str, int]], list[Problem]]:
    """Line of each card and of its keys, from the raw nodes; repeated ids are problems."""
    card_lines: dict[str, int] = {}
    field_lines: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    _, cards_node = _child(root, "cards")
    if not isinstance(cards_node, yaml.SequenceNode):
        return card_lines, field_lines, problems
    for card_node in cards_node.value:
        _, id_node = _child(card_node, "id")
        if not isinstance(id_node, yaml.ScalarNode) or not id_node.value:
            continue
        card_id, line = id_node.value, _line(card_node)
        if card_id in card_lines:
            first = card_lines[card_id]
            message = f"duplicate card id '{card_id}' (first at line {first})"
            problems.append(Problem(path, line, card_id, message))
            continue
        card_lines[card_id] = line
        field_lines[card_id] = {
            k.value: _line(k) for k, _ in card_node.value if isinstance(k, yaml.ScalarNode)
        }
    return card_lines, field_lines, problems


def parse_file(path: Path) -> FileEntry:
    """Validate one deck file; never raises for bad content (problems go in the entry)."""
    try:
        mtime_ns, size = file_key(path)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return FileEntry(path, 0, 0, None, [Problem(path, 1, None, f"cannot read: {error}")])

    def failed(problems: list[Problem]) -> FileEntry:
        return FileEntry(path, mtime_ns, size, None, problems)

    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(error, "problem", None) or str(error)
        context = getattr(error, "context", None)
        detail = f"{problem} ({context})" if context else problem
        return failed([Problem(path, line, None, f"YAML syntax error: {detail}")])
    finally:
        loader.dispose()
    if root is None or not isinstance(data, dict):
        line = _line(root) if root is not None else 1
        message = "a deck must be a mapping with deck, title, cards"
        return failed([Problem(path, line, None, message)])

    problems: list[Problem] = []
    duplicates: list[tuple[int, str]] = []
    _duplicate_keys(root, duplicates)
    problems.extend(Problem(path, line, None, f"duplicate key '{key}'") for line, key in duplicates)
    card_lines, field_lines, id_problems = _card_lines(path, root)
    problems.extend(id_problems)
    try:
        deck = Deck.model_validate(data)
    except ValidationError as error:
        problems.extend(_validation_problems(path, root, data, error))
    if problems:
        return failed(sorted(problems, key=lambda p: p.line))
    deck_key, _ = _child(root, "deck")
    return FileEntry(
        path,
        mtime_ns,
        size,
        deck.model_dump(mode="json"),
        [],
        deck_line=_line(deck_key) if deck_key is not None else 1,
        card_lines=card_lines,
        field_lines=field_lines,
        hashes={card.id: card.content_hash() for card in deck.cards},
    )


# --- loading -----------------------------------------------------------------------------------
def _entries(paths: list[Path], use_cache: bool) -> list[FileEntry]:
    cache = read_cache() if use_cache else {}
    entries: list[FileEntry] = []
    changed = False
    for path in paths:
        entry = cached_entry(cache, path) if use_cache else None
        if entry is None:
            entry = parse_file(path)
            if entry.mtime_ns:
                cache[str(path.resolve())] = entry
                changed = True
        entries.append(entry)
    if use_cache and changed:
        live = {k: v for k, v in cache.items() if Path(k).exists()}
        write_cache(live)
    return entries


def _run_link_checkers(decks: list[LoadedDeck]) -> list[Problem]:
    problems: list[Problem] = []
    for checker in LINK_CHECKERS:
        for loaded in decks:
            problems.extend(checker(loaded))
    return problems


def _rebuild(data: dict[str, Any]) -> Deck:
    """A Deck from data that already passed validation (the cache is keyed by the models'
    source too): model_construct skips re-validating, ~10x faster for large decks."""
    cards = []
    for raw in data["cards"]:
        card = dict(raw)
        if card.get("lab") is not None:
            card["lab"] = LabLink.model_construct(**card["lab"])
        if card.get("predict") is not None:
            predict = dict(card["predict"])
            predict["choices"] = [PredictChoice.model_construct(**c) for c in predict["choices"]]
            card["predict"] = Predict.model_construct(**predict)
        cards.append(Card.model_construct(**card))
    return Deck.model_construct(**{**data, "cards": cards})


def _build(entries: list[FileEntry]) -> DeckSet:
    accepted, problems, invalid = assemble(entries)
    loaded = [LoadedDeck(_rebuild(e.deck), e.path, e.card_lines, e.field_lines) for e in accepted]
    problems.extend(_run_link_checkers(loaded))
    return DeckSet(loaded, problems, invalid)


def load_decks(
    extra_dirs: Iterable[str | Path] | None = None,
    include_bundled: bool = True,
    *,
    use_cache: bool = True,
) -> DeckSet:
    """Bundled decks plus user decks (--decks dirs, then DRILL_DECKS). Invalid files are left out
    and listed in `invalid_paths`; every problem is in `problems`. Raises DeckPathError when a
    given deck directory does not exist."""
    return _build(_entries(deck_files(extra_dirs, include_bundled), use_cache))


def check_paths(paths: Iterable[str | Path]) -> list[Problem]:
    """Validate the given files (and deck files in given dirs) from scratch, cross-file
    duplicates included; [] when all is well."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.is_file() and is_deck_file(p)))
        elif path.exists():
            files.append(path)
        else:
            raise DeckPathError(f"no such deck file or directory: {path}")
    return _build(_entries(files, use_cache=False)).problems
