"""Light (stdlib-only) side of deck loading: which files, the cache lookup, and assembly.

The expensive part of loading decks is importing yaml and pydantic and validating
(drill/decks/loader.py). Each file's validation result is cached as plain JSON data
(drill/decks/cache.py). When every file hits the cache, `load_index()` gives the first paint what
it needs (deck outlines and card text) without importing yaml or pydantic.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import decks
from drill.decks.cache import read_cache
from drill.decks.limits import MAX_FILE_BYTES
from drill.errors import DrillError
from drill.paths import user_deck_dirs

DECK_SUFFIXES = (".yaml", ".yml")

FileKey = tuple[int, int, int]  # mtime_ns, ctime_ns, size


class DeckPathError(DrillError):
    """A deck path given by the user does not exist or cannot be listed."""


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    card_id: str | None
    message: str

    def __str__(self) -> str:
        card = f"card {self.card_id}: " if self.card_id else ""
        return _one_line(f"{self.path}:{self.line}: {card}{self.message}")


def _one_line(text: str) -> str:
    """Control characters (from file names or deck keys) shown escaped: one problem, one line,
    and no terminal escape sequences."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass
class FileEntry:
    """What validating one deck file found. `deck` is the validated deck as plain data (JSON
    types, as Deck.model_dump(mode="json") gives), None when the file has problems. `key` is
    None when the result must not be cached (the file could not be looked at)."""

    path: Path
    key: FileKey | None
    deck: dict[str, Any] | None
    problems: list[Problem]
    deck_line: int = 1
    card_lines: dict[str, int] = field(default_factory=dict)
    field_lines: dict[str, dict[str, int]] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        """The cache's form (see drill.decks.cache); only for an entry with a key."""
        mtime_ns, ctime_ns, size = self.key or (0, 0, 0)
        return {
            "mtime_ns": mtime_ns,
            "ctime_ns": ctime_ns,
            "size": size,
            "deck": self.deck,
            "problems": [
                {"line": p.line, "card_id": p.card_id, "message": p.message} for p in self.problems
            ],
            "deck_line": self.deck_line,
            "card_lines": self.card_lines,
            "field_lines": self.field_lines,
            "hashes": self.hashes,
        }

    @classmethod
    def from_data(cls, path: Path, data: dict[str, Any]) -> FileEntry:
        """From a shape-checked cache entry (drill.decks.cache.valid_entry)."""
        return cls(
            path,
            (data["mtime_ns"], data["ctime_ns"], data["size"]),
            data["deck"],
            [Problem(path, p["line"], p["card_id"], p["message"]) for p in data["problems"]],
            data["deck_line"],
            data["card_lines"],
            data["field_lines"],
            data["hashes"],
        )


@dataclass(frozen=True)
class DeckOutline:
    """Enough of a deck to count and queue it."""

    deck_id: str
    title: str
    card_ids: tuple[str, ...]


@dataclass(frozen=True)
class CardRecord:
    """A card as plain data (first-paint path); same attribute names as models.Card, except
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
    exercise: str | None = None
    numbers: dict[str, Any] | None = None  # a numbers card's spec (drill.decks.numbers)

    def content_hash(self) -> str:
        return self.hash


# --- which files -------------------------------------------------------------------------------
def is_deck_file(path: Path) -> bool:
    """Named like a deck (whatever it turns out to be); hidden files (editor locks such as
    .#deck.yaml) and mock-round definitions are not decks."""
    name = path.name
    return path.suffix in DECK_SUFFIXES and not name.startswith((".", "round-"))


def list_deck_dir(directory: Path) -> list[Path]:
    """Everything named like a deck in `directory`, sorted: files, but also directories,
    broken links and the like, so that each is reported instead of silently skipped."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as error:
        raise DeckPathError(f"cannot list deck directory {directory}: {error.strerror}") from None
    return [directory / name for name in names if is_deck_file(directory / name)]


def real_path(path: Path) -> str:
    """The file's real path (cache key, duplicate detection); never raises (link loops)."""
    return os.path.realpath(path)


def deck_files(
    extra_dirs: Iterable[str | Path] | None = None, include_bundled: bool = True
) -> list[Path]:
    """Bundled deck files, then user decks: each --decks/DRILL_DECKS entry (a dir or a file)."""
    files: list[Path] = list(decks.bundled_deck_paths()) if include_bundled else []
    for entry in user_deck_dirs(extra_dirs):
        if entry.is_dir():
            files.extend(list_deck_dir(entry))
        elif entry.exists() or entry.is_symlink():
            files.append(entry)
        else:
            raise DeckPathError(f"deck directory not found: {entry}")
    return unique_files(files)


def unique_files(files: Iterable[Path]) -> list[Path]:
    unique: list[Path] = []
    seen: set[str] = set()
    for path in files:
        real = real_path(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def examine(path: Path) -> FileKey | str:
    """The file's cache key, or why it cannot be a deck file (one line, no path)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            return f"broken symlink (its target {os.readlink(path)} does not exist)"
        return "no such file"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symlink loop (the link leads back to itself)"
        return f"cannot read: {error.strerror}"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a deck file (rename it or move it out of the deck folder)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        limit_mib = MAX_FILE_BYTES // (1024 * 1024)
        return f"file is {info.st_size} bytes; a deck file may have at most {limit_mib} MiB"
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size)


def unreadable(path: Path, message: str, key: FileKey | None = None) -> FileEntry:
    return FileEntry(path, key, None, [Problem(path, 1, None, message)])


def cached_entry(cache: dict[str, dict[str, Any]], path: Path, key: FileKey) -> FileEntry | None:
    data = cache.get(real_path(path))
    if data is None or (data["mtime_ns"], data["ctime_ns"], data["size"]) != key:
        return None
    return FileEntry.from_data(path, data)  # problems are reported under the path given


# --- assembly ----------------------------------------------------------------------------------
def assemble(entries: list[FileEntry]) -> tuple[list[FileEntry], list[Problem], list[Path]]:
    """Accept entries with a deck in order; a deck whose id repeats an earlier accepted deck's
    is rejected, a card whose id another accepted deck has is left out. Returns (accepted,
    problems, invalid paths: the files of which nothing loaded)."""
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
        deck_id = entry.deck["deck"]
        if deck_id in deck_owner:
            message = f"duplicate deck id '{deck_id}' (also in {deck_owner[deck_id].path})"
            problems.append(Problem(entry.path, entry.deck_line, None, message))
            invalid.append(entry.path)
            continue
        kept: list[dict[str, Any]] = []
        for card in entry.deck["cards"]:
            other = card_owner.get(card["id"])
            if other is None:
                kept.append(card)
                continue
            where = f"{other.path}:{other.card_lines.get(card['id'], 1)}"
            line = entry.card_lines.get(card["id"], 1)
            message = f"duplicate card id '{card['id']}' (also in {where})"
            problems.append(Problem(entry.path, line, card["id"], message))
        if len(kept) < len(entry.deck["cards"]):  # a copy: the cached entry stays as parsed
            entry = replace(entry, deck={**entry.deck, "cards": kept})
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
        exercise=card.get("exercise"),
        numbers=card.get("numbers"),
    )


@dataclass
class DeckIndex:
    """Accepted decks as plain data (first-paint path)."""

    entries: list[FileEntry]
    problems: list[Problem]
    invalid_paths: list[Path]  # files of which nothing loaded

    def __post_init__(self) -> None:
        self._by_card: dict[str, tuple[FileEntry, dict[str, Any]]] = {
            card["id"]: (entry, card)
            for entry in self.entries
            for card in entry.deck["cards"]  # type: ignore[index]
        }

    @classmethod
    def of(cls, entries: list[FileEntry]) -> DeckIndex:
        return cls(*assemble(entries))

    def outline(self) -> list[DeckOutline]:
        return [outline_of(e) for e in self.entries]

    def skipped_cards(self) -> list[Problem]:
        """Problems of the loaded files: each left a card out (the rest of the file loaded)."""
        skipped = {real_path(path) for path in self.invalid_paths}
        return [p for p in self.problems if real_path(p.path) not in skipped]

    def card_record(self, card_id: str) -> CardRecord | None:
        found = self._by_card.get(card_id)
        return None if found is None else record_of(*found)

    def deck_of(self, card_id: str) -> str:
        return self._by_card[card_id][0].deck["deck"]  # type: ignore[index]


def load_index(
    extra_dirs: Iterable[str | Path] | None = None, include_bundled: bool = True
) -> DeckIndex | None:
    """Decks from the cache alone; None if any file is new or changed since it was validated
    (the caller then uses loader.load_decks, which validates and refreshes the cache). A file
    that cannot be a deck at all (a directory, a broken link) is a problem, not a miss."""
    cache = read_cache()
    entries: list[FileEntry] = []
    for path in deck_files(extra_dirs, include_bundled):
        key = examine(path)
        if isinstance(key, str):
            entries.append(unreadable(path, key))
            continue
        entry = cached_entry(cache, path, key)
        if entry is None:
            return None
        entries.append(entry)
    return DeckIndex.of(entries)
