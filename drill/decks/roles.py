"""Interview roles (decks/roles.toml, data beside the bundled decks): which decks and tags each
role weights, the topic areas readiness groups tags into, and the days before the interview
that get a mock round. Read with tomllib (light enough for first paint), size-bounded and
validated: any problem is one DrillError line naming the file and the key.

A card's value for a role (Role.card_value) orders new cards under an interview plan: its deck's
weight (the role's `default` for a deck it does not list) times the largest weight among its tags
that the role lists (1.0 when it lists none of them).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from decks import BUNDLED_DECKS_DIR
from drill.errors import DrillError
from drill.files import FileRefused, read_regular

ROLES_FILE = BUNDLED_DECKS_DIR / "roles.toml"
MAX_FILE_BYTES = 64 * 1024  # a role table is a page of weights; refuse to parse megabytes
WEIGHT_RANGE = (0.01, 100.0)
MAX_DAYS_BEFORE = 365  # a plan reaches at most a year out (drill.plan.profile)
DEFAULT_MOCK_DAYS = (7, 4, 2)
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_ROLE_KEYS = ("title", "default", "mock_days_before", "decks", "tags")


class RolesError(DrillError):
    """decks/roles.toml (or a given role file) cannot be read or holds an invalid value."""


@dataclass(frozen=True)
class Role:
    name: str
    title: str
    deck_weights: Mapping[str, float]
    tag_weights: Mapping[str, float]
    default_weight: float  # a deck not listed
    mock_days_before: tuple[int, ...]  # days before the date with a mock round, largest first

    def card_value(self, deck_id: str, tags: Iterable[str]) -> float:
        """The deck's weight (or the default) times the largest listed weight among `tags`
        (1.0 when none of them is listed): higher is introduced first."""
        listed = [self.tag_weights[tag] for tag in tags if tag in self.tag_weights]
        return self.deck_weights.get(deck_id, self.default_weight) * max(listed, default=1.0)


@dataclass(frozen=True)
class RoleTable:
    roles: Mapping[str, Role]  # in file order
    areas: Mapping[str, tuple[str, ...]]  # topic area -> its tags

    def role(self, name: str) -> Role:
        """The role called `name`; a one-line DrillError naming the known roles otherwise."""
        found = self.roles.get(name)
        if found is None:
            known = ", ".join(self.roles)
            raise DrillError(f"unknown role {_shown(name)} (known: {known})")
        return found


def _shown(value: object, limit: int = 40) -> str:
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def _key(name: str) -> str:
    """A TOML key as a message names it: bare when plain, else quoted and escaped."""
    return name if _PLAIN_KEY.match(name) else _shown(name)


_cache: dict[tuple[Path, int, int], RoleTable] = {}


def load_roles(path: Path | None = None) -> RoleTable:
    """The role table in `path` (the bundled decks/roles.toml by default); cached while the
    file is unchanged. RolesError (one line, naming the file and the key) on any problem."""
    path = path or ROLES_FILE
    try:
        info = path.stat()
    except OSError as error:
        raise RolesError(f"{path}: cannot read the role table: {error.strerror or error}") from None
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _cache:
        _cache.clear()  # one file in use at a time: never grows
        _cache[key] = _parse(path, _read(path))
    return _cache[key]


def _read(path: Path) -> str:
    try:  # a directory, FIFO or device is refused without blocking (drill.files)
        return read_regular(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise RolesError(f"{path}: no such role table") from None
    except FileRefused as error:
        raise RolesError(f"{path}: cannot read the role table: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RolesError(f"{path}: cannot read the role table: {error}") from None


def _parse(path: Path, text: str) -> RoleTable:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RolesError(f"{path}: invalid TOML: {error}") from None
    except (ValueError, RecursionError) as error:  # 5000-digit integers, deeply nested arrays
        detail = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise RolesError(f"{path}: invalid TOML: {_shown(detail, 80)}") from None

    def fail(key: str, problem: str) -> RolesError:
        return RolesError(f"{path}: {key} {problem}")

    for key in raw:
        if key not in ("areas", "roles"):
            raise fail(_key(key), "is not a key of a role table (known: areas, roles)")
    areas = _areas(raw.get("areas", {}), fail)
    roles_raw = raw.get("roles")
    if not isinstance(roles_raw, dict) or not roles_raw:
        raise fail("roles", "must hold at least one [roles.NAME] table")
    roles = {name: _role(name, value, fail) for name, value in roles_raw.items()}
    return RoleTable(roles=MappingProxyType(roles), areas=MappingProxyType(areas))


Fail = Callable[[str, str], RolesError]  # (key, problem) -> the error naming the file


def _areas(value: object, fail: Fail) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise fail("areas", "must be a table of area = [tags]")
    areas: dict[str, tuple[str, ...]] = {}
    for area, tags in value.items():
        key = f"areas.{_key(area)}"
        if not _NAME.match(area):
            raise fail(key, "is not a name (lowercase letters, digits, '-')")
        if not (isinstance(tags, list) and tags and all(isinstance(t, str) and t for t in tags)):
            raise fail(key, f"must be a non-empty list of tags, got {_shown(tags)}")
        areas[area] = tuple(dict.fromkeys(tags))
    return areas


def _role(name: str, value: object, fail: Fail) -> Role:
    key = f"roles.{_key(name)}"
    if not _NAME.match(name):
        raise fail(key, "is not a role name (lowercase letters, digits, '-')")
    if not isinstance(value, dict):
        raise fail(key, "must be a table")
    for item in value:
        if item not in _ROLE_KEYS:
            known = ", ".join(_ROLE_KEYS)
            raise fail(f"{key}.{_key(item)}", f"is not a role key (known: {known})")
    title = value.get("title")
    if not (isinstance(title, str) and title.strip() and len(title) <= 80):
        raise fail(f"{key}.title", f"must be text of 1..80 characters, got {_shown(title)}")
    default = _weight(value.get("default", 1.0), f"{key}.default", fail)
    days = value.get("mock_days_before", list(DEFAULT_MOCK_DAYS))
    if not (
        isinstance(days, list)
        and all(isinstance(d, int) and not isinstance(d, bool) for d in days)
        and all(1 <= d <= MAX_DAYS_BEFORE for d in days)
        and len(set(days)) == len(days)
    ):
        raise fail(
            f"{key}.mock_days_before",
            f"must be a list of distinct whole days 1..{MAX_DAYS_BEFORE}, got {_shown(days)}",
        )
    return Role(
        name=name,
        title=title.strip(),
        deck_weights=_weights(value.get("decks", {}), f"{key}.decks", fail),
        tag_weights=_weights(value.get("tags", {}), f"{key}.tags", fail),
        default_weight=default,
        mock_days_before=tuple(sorted(days, reverse=True)),
    )


def _weights(value: object, key: str, fail: Fail) -> Mapping[str, float]:
    if not isinstance(value, dict):
        raise fail(key, "must be a table of name = weight")
    weights = {}
    for name, weight in value.items():
        if not name:
            raise fail(key, "names an empty key")
        weights[name] = _weight(weight, f"{key}.{_key(name)}", fail)
    return MappingProxyType(weights)


def _weight(value: object, key: str, fail: Fail) -> float:
    low, high = WEIGHT_RANGE
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and low <= value <= high):  # type: ignore[arg-type]
        raise fail(key, f"must be a number {low:g}..{high:g}, got {_shown(value)}")
    return float(value)  # type: ignore[arg-type]
