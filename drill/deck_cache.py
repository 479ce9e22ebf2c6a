"""Light (stdlib-only) side of deck loading: which files, the validated-deck cache, and assembly.

The expensive part of loading decks is importing pydantic and validating (drill/deck_loader.py).
Each file's validation result is cached in drill_home()/cache/decks.pickle, keyed by resolved
path + mtime_ns + size. When every file hits the cache, `load_index()` gives the first paint what
it needs (deck outlines and card text) without importing yaml or pydantic.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import decks
from drill.errors import DrillError
from drill.paths import cache_dir, user_deck_dirs

CACHE_VERSION = 1
DECK_SUFFIXES = (".yaml", ".yml")


class DeckPathError(DrillError):
    """A deck path given by the user does not exist."""


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    card_id: str | None
    message: str

    def __str__(self) -> str:
        card = f"card {self.card_id}: " if self.card_id else ""
        return f"{self.path}:{self.line}: {card}{self.message}"


@dataclass
class FileEntry:
    """What validating one deck file found. `deck` is the validated deck as plain data (JSON
    types, as Deck.model_dump(mode="json") gives), None when the file has problems."""

    path: Path
    mtime_ns: int
    size: int
    deck: dict[str, Any] | None
    problems: list[Problem]
    deck_line: int = 1
    card_lines: dict[str, int] = field(default_factory=dict)
    field_lines: dict[str, dict[str, int]] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DeckOutline:
    """Enough of a deck to count and queue it."""

    deck_id: str
    title: str
    card_ids: tuple[str, ...]


@dataclass(frozen=True)
class CardRecord:
    """A card as plain data (first-paint path); same attribute names as deck_models.Card, except
    that `lab` and `predict` are plain dicts here."""

    id: str
    deck_id: str
    level: str
    tags: tuple[str, ...]
    front: str
    back: str
    rubric: tuple[str, ...]
    lab: dict[str, Any] | None
    predict: dict[str, Any] | None
    hash: str

    def content_hash(self) -> str:
        return self.hash


def is_deck_file(path: Path) -> bool:
    return path.suffix in DECK_SUFFIXES and not path.name.startswith("round-")


def deck_files(
    extra_dirs: Iterable[str | Path] | None = None, include_bundled: bool = True
) -> list[Path]:
    """Bundled deck files, then user decks: each --decks/DRILL_DECKS entry (a dir or a file)."""
    files: list[Path] = list(decks.bundled_deck_paths()) if include_bundled else []
    for entry in user_deck_dirs(extra_dirs):
        if entry.is_dir():
            files.extend(sorted(p for p in entry.iterdir() if p.is_file() and is_deck_file(p)))
        elif entry.is_file():
            files.append(entry)
        else:
            raise DeckPathError(f"deck directory not found: {entry}")
    unique: list[Path] = []
    seen: set[Path] = set()
    for path in files:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            unique.append(path)
    return unique


def file_key(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


# --- cache -------------------------------------------------------------------------------------
def cache_path() -> Path:
    return cache_dir() / "decks.pickle"


def _cache_version() -> tuple[int, int, int]:
    """Changes when the deck models change: validated data from older rules is not reused."""
    try:
        stat = (Path(__file__).resolve().parent / "deck_models.py").stat()
    except OSError:
        return (CACHE_VERSION, 0, 0)
    return (CACHE_VERSION, stat.st_mtime_ns, stat.st_size)


def read_cache() -> dict[str, FileEntry]:
    """Cached entries by resolved path; {} when missing, unreadable or from another version."""
    try:
        with cache_path().open("rb") as handle:
            version, entries = pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        return {}
    return entries if version == _cache_version() and isinstance(entries, dict) else {}


def write_cache(entries: dict[str, FileEntry]) -> None:
    """Atomically replace the cache (a concurrent reader sees the old or the new file)."""
    target = cache_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".decks-", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump((_cache_version(), entries), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except OSError:
        # A read-only home only costs speed: the next start validates again.
        return


def cached_entry(cache: dict[str, FileEntry], path: Path) -> FileEntry | None:
    entry = cache.get(str(path.resolve()))
    try:
        key = file_key(path)
    except OSError:
        return None
    if entry is None or (entry.mtime_ns, entry.size) != key:
        return None
    entry.path = path  # report problems under the path the user gave
    return entry


# --- assembly ----------------------------------------------------------------------------------
def assemble(entries: list[FileEntry]) -> tuple[list[FileEntry], list[Problem], list[Path]]:
    """Accept valid entries in order; a deck whose id or card ids repeat an earlier accepted
    deck's is rejected. Returns (accepted, problems, invalid paths)."""
    accepted: list[FileEntry] = []
    problems: list[Problem] = []
    invalid: list[Path] = []
    deck_owner: dict[str, FileEntry] = {}
    card_owner: dict[str, FileEntry] = {}
    for entry in entries:
        problems.extend(entry.problems)
        if entry.deck is None:
            invalid.append(entry.path)
            continue
        found: list[Problem] = []
        deck_id = entry.deck["deck"]
        if deck_id in deck_owner:
            found.append(
                Problem(
                    entry.path,
                    entry.deck_line,
                    None,
                    f"duplicate deck id '{deck_id}' (also in {deck_owner[deck_id].path})",
                )
            )
        for card in entry.deck["cards"]:
            other = card_owner.get(card["id"])
            if other is not None:
                where = f"{other.path}:{other.card_lines.get(card['id'], 1)}"
                found.append(
                    Problem(
                        entry.path,
                        entry.card_lines.get(card["id"], 1),
                        card["id"],
                        f"duplicate card id '{card['id']}' (also in {where})",
                    )
                )
        if found:
            problems.extend(found)
            invalid.append(entry.path)
            continue
        accepted.append(entry)
        deck_owner[deck_id] = entry
        for card in entry.deck["cards"]:
            card_owner[card["id"]] = entry
    return accepted, problems, invalid


def outline_of(entry: FileEntry) -> DeckOutline:
    deck = entry.deck or {}
    return DeckOutline(
        deck_id=deck["deck"], title=deck["title"], card_ids=tuple(c["id"] for c in deck["cards"])
    )


def record_of(entry: FileEntry, card: dict[str, Any]) -> CardRecord:
    return CardRecord(
        id=card["id"],
        deck_id=(entry.deck or {})["deck"],
        level=card["level"],
        tags=tuple(card.get("tags") or ()),
        front=card["front"],
        back=card["back"],
        rubric=tuple(card.get("rubric") or ()),
        lab=card.get("lab"),
        predict=card.get("predict"),
        hash=entry.hashes[card["id"]],
    )


@dataclass
class DeckIndex:
    """The cached decks as plain data (first-paint path)."""

    entries: list[FileEntry]
    problems: list[Problem]
    invalid_paths: list[Path]

    def __post_init__(self) -> None:
        self._by_card: dict[str, tuple[FileEntry, dict[str, Any]]] = {
            card["id"]: (entry, card)
            for entry in self.entries
            for card in entry.deck["cards"]  # type: ignore[index]
        }

    def outline(self) -> list[DeckOutline]:
        return [outline_of(e) for e in self.entries]

    def card_record(self, card_id: str) -> CardRecord | None:
        found = self._by_card.get(card_id)
        return None if found is None else record_of(*found)

    def deck_of(self, card_id: str) -> str:
        return self._by_card[card_id][0].deck["deck"]  # type: ignore[index]


def load_index(
    extra_dirs: Iterable[str | Path] | None = None, include_bundled: bool = True
) -> DeckIndex | None:
    """Decks from the cache alone; None if any file is new or changed since it was validated
    (the caller then uses deck_loader.load_decks, which validates and refreshes the cache)."""
    cache = read_cache()
    entries: list[FileEntry] = []
    for path in deck_files(extra_dirs, include_bundled):
        entry = cached_entry(cache, path)
        if entry is None:
            return None
        entries.append(entry)
    accepted, problems, invalid = assemble(entries)
    return DeckIndex(accepted, problems, invalid)
