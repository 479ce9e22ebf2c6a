"""The validated-deck cache: plain JSON data, checked field by field on read (stdlib only).

drill_home()/cache/decks.json holds, per deck file (by real path), what validating it found,
keyed by the file's mtime, ctime and size. The whole cache is keyed by DECK_SCHEMA_VERSION:
bump it whenever drill/decks/models.py or what the loader stores changes (a test compares the
models' JSON schema with the one recorded for this version). Nothing read from here is ever
executed; a file that is unreadable or off-shape in any way is ignored and rebuilt.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drill.files import read_regular
from drill.paths import cache_dir

DECK_SCHEMA_VERSION = 5
CACHE_FORMAT = "drill-deck-cache"

Check = Callable[[Any], bool]


MAX_CACHE_BYTES = 64 * 1024**2  # far above what the bundled and user decks' entries take


def cache_path() -> Path:
    return cache_dir() / "decks.json"


# --- shape checks (what model_dump(mode="json") of a valid Deck looks like) ---------------------
def _str(value: Any) -> bool:
    return type(value) is str


def _int(value: Any) -> bool:
    return type(value) is int


_EXACT_TYPES: dict[Check, type] = {_str: str, _int: int}


class _Optional:
    """None or what `check` accepts; a record checks the None itself, without a call."""

    def __init__(self, check: Check) -> None:
        self.check = check

    def __call__(self, value: Any) -> bool:
        return value is None or self.check(value)


def _optional(check: Check) -> Check:
    return _Optional(check)


# Plain loops rather than all(<generator>): every start checks every cached card (issue 40).
def _list_of(check: Check) -> Check:
    exact = _EXACT_TYPES.get(check)
    if exact is not None:  # a list of str or of int: the type compared inline, no call per item

        def typed(value: Any) -> bool:
            if type(value) is not list:
                return False
            for item in value:  # noqa: SIM110
                if type(item) is not exact:
                    return False
            return True

        return typed

    def checked(value: Any) -> bool:
        if type(value) is not list:
            return False
        for item in value:  # noqa: SIM110 (a loop: faster than all(<generator>))
            if not check(item):
                return False
        return True

    return checked


def _dict_of(check: Check) -> Check:
    exact = _EXACT_TYPES.get(check)
    if exact is not None:  # e.g. card id -> line: no call per item (50,000 cards, issue 40)

        def typed(value: Any) -> bool:
            if type(value) is not dict:
                return False
            for key, item in value.items():
                if type(key) is not str or type(item) is not exact:
                    return False
            return True

        return typed

    def checked(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for key, item in value.items():  # noqa: SIM110
            if type(key) is not str or not check(item):
                return False
        return True

    return checked


def _record(fields: dict[str, Check]) -> Check:
    keys = set(fields)
    # (name, check, None allowed, exact type): an optional field that is None (most are) and
    # a plain str or int field cost no call (every cached card is checked at every start)
    checks = []
    for name, check in fields.items():
        optional = isinstance(check, _Optional)
        inner = check.check if isinstance(check, _Optional) else check
        checks.append((name, inner, optional, _EXACT_TYPES.get(inner)))

    def checked(value: Any) -> bool:
        if type(value) is not dict or value.keys() != keys:
            return False
        for name, check, optional, exact in checks:
            item = value[name]
            if item is None and optional:
                continue
            if exact is not None:
                if type(item) is not exact:
                    return False
            elif not check(item):
                return False
        return True

    return checked


def _param(value: Any) -> bool:
    kind = type(value)
    return kind in (str, int, bool) or (kind is float and math.isfinite(value))


# Field names and checks, one table per model (a test holds them to the models' fields).
LAB_FIELDS: dict[str, Check] = {
    "run": _str,
    "params": _dict_of(_param),
    "world_size": _optional(_int),
    "expect": _list_of(_str),
    "where": _str,
}
PREDICT_FIELDS: dict[str, Check] = {
    "ask": _str,
    "choices": _list_of(_record({"text": _str, "when": _str})),
}


def _number(value: Any) -> bool:
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


NUMBER_VAR_FIELDS: dict[str, Check] = {
    "min": _optional(_number),
    "max": _optional(_number),
    "step": _optional(_number),
    "choices": _list_of(_number),
    "unit": _str,
}
NUMBERS_FIELDS: dict[str, Check] = {
    "vars": _dict_of(_record(NUMBER_VAR_FIELDS)),
    "let": _dict_of(_str),
    "answer": _str,
    "unit": _str,
    "tolerance": _number,
}
CARD_FIELDS: dict[str, Check] = {
    "id": _str,
    "level": lambda value: value in ("easy", "medium", "hard"),
    "tags": _list_of(_str),
    "front": _str,
    "back": _str,
    "more": _str,
    "rubric": _list_of(_str),
    "replaces": _list_of(_str),
    "lab": _optional(_record(LAB_FIELDS)),
    "predict": _optional(_record(PREDICT_FIELDS)),
    "exercise": _optional(_str),
    "numbers": _optional(_record(NUMBERS_FIELDS)),
}
DECK_FIELDS: dict[str, Check] = {
    "deck": _str,
    "title": _str,
    "description": _str,
    "cards": _list_of(_record(CARD_FIELDS)),
}
_is_deck = _record(DECK_FIELDS)
_is_problem = _record({"line": _int, "card_id": _optional(_str), "message": _str})
_is_entry = _record(
    {
        "mtime_ns": _int,
        "ctime_ns": _int,
        "size": _int,
        "deck": _optional(_is_deck),
        "problems": _list_of(_is_problem),
        "deck_line": _int,
        "card_lines": _dict_of(_int),
        "field_lines": _dict_of(_dict_of(_int)),
        "hashes": _dict_of(_str),
    }
)


def valid_entry(data: Any) -> bool:
    """A cached entry as stored: right shape, and a content hash for every card."""
    if not _is_entry(data):
        return False
    deck = data["deck"]
    return deck is None or all(card["id"] in data["hashes"] for card in deck["cards"])


# --- read and write -----------------------------------------------------------------------------
def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not data")


def read_cache() -> dict[str, dict[str, Any]]:
    """Cached entries (plain dicts, shape-checked) by real path; {} when the file is missing,
    unreadable, from another schema version, or off-shape anywhere."""
    try:  # a FIFO, a device or a symlink to one is refused, not read (drill.files)
        raw = read_regular(cache_path(), MAX_CACHE_BYTES)
        data = json.loads(raw, parse_constant=_refuse_constant)
    except (OSError, ValueError, RecursionError, MemoryError):  # FileRefused is a ValueError
        return {}
    if (
        type(data) is not dict
        or data.get("format") != CACHE_FORMAT
        or data.get("schema") != DECK_SCHEMA_VERSION
        or type(data.get("entries")) is not dict
    ):
        return {}
    entries: dict[str, dict[str, Any]] = data["entries"]
    return {key: entry for key, entry in entries.items() if valid_entry(entry)}


def write_cache(entries: dict[str, dict[str, Any]]) -> None:
    """Atomically replace the cache (a concurrent reader sees the old or the new file)."""
    target = cache_path()
    payload = {"format": CACHE_FORMAT, "schema": DECK_SCHEMA_VERSION, "entries": entries}
    try:
        text = json.dumps(payload, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return  # not data (cannot happen for validated decks): keep no cache rather than bad
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".decks-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
        tmp = None
    except OSError:
        return  # a read-only home only costs speed: the next start validates again
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
