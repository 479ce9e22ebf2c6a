"""User settings: a small TOML file in drill_home(), read with tomllib. Missing file = defaults."""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from drill.errors import SettingsError
from drill.files import FileRefused, read_regular
from drill.paths import settings_path
from drill.runs.retention import DEFAULT_KEEP

LEECH_ACTIONS = ("suspend", "tag")


@dataclass(frozen=True)
class Settings:
    desired_retention: float = 0.9  # FSRS target probability of recall at the due date
    new_cards_per_day: int = 20  # new cards introduced per day, across all decks
    learn_ahead_minutes: int = 20  # a card due again within this window comes back this session
    day_start_hour: int = 4  # local hour at which "today" starts (bury, daily new limit)
    leech_threshold: int = 8  # lapses that make a card a leech (0: never)
    leech_action: str = "suspend"  # "suspend" (and tag) or "tag" (flag only)
    keep_runs: int = DEFAULT_KEEP  # run folders kept per kind (drill.runs.retention; 0: all)
    # personal FSRS-6 parameters fitted by `drill optimize`; None: the fsrs package's defaults
    fsrs_parameters: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise SettingsError(f"{field.name} must be a finite number, got {value}")
        if not 0.7 <= self.desired_retention <= 0.99:
            raise SettingsError("desired_retention must be between 0.7 and 0.99")
        if not 0 <= self.new_cards_per_day <= 10_000:
            raise SettingsError("new_cards_per_day must be between 0 and 10000")
        if not 0 <= self.learn_ahead_minutes <= 24 * 60:
            raise SettingsError("learn_ahead_minutes must be between 0 and 1440")
        if not 0 <= self.day_start_hour <= 23:
            raise SettingsError("day_start_hour must be between 0 and 23")
        if not 0 <= self.leech_threshold <= 1000:
            raise SettingsError("leech_threshold must be between 0 and 1000")
        if not 0 <= self.keep_runs <= 100_000:
            raise SettingsError("keep_runs must be between 0 and 100000")
        if self.leech_action not in LEECH_ACTIONS:
            raise SettingsError('leech_action must be "suspend" or "tag"')
        if self.fsrs_parameters is not None:
            object.__setattr__(
                self, "fsrs_parameters", checked_fsrs_parameters(self.fsrs_parameters)
            )


_WHOLE = "a whole number"
_NUMBER = "a number"
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "desired_retention": ((float, int), _NUMBER),
    "new_cards_per_day": ((int,), _WHOLE),
    "learn_ahead_minutes": ((int,), _WHOLE),
    "day_start_hour": ((int,), _WHOLE),
    "leech_threshold": ((int,), _WHOLE),
    "leech_action": ((str,), '"suspend" or "tag"'),
    "keep_runs": ((int,), _WHOLE),
    "fsrs_parameters": ((list,), "a list of 21 numbers (FSRS-6)"),
}
MAX_FILE_BYTES = 64 * 1024  # a settings file is a few lines; refuse to parse megabytes


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read(path: Path) -> str | None:
    """The file's text; None when there is no file."""
    try:  # a directory, FIFO or device is refused without blocking (drill.files)
        return read_regular(path, MAX_FILE_BYTES).decode("utf-8-sig")  # a BOM, as decks allow
    except FileNotFoundError:
        return None
    except FileRefused as error:
        raise SettingsError(f"cannot read settings: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read settings: {error}") from None


def load_settings(path: Path | None = None) -> Settings:
    """Read settings.toml (top-level keys = Settings fields). Any problem is a one-line
    SettingsError naming the file (and the key): never another exception."""
    path = path or settings_path()
    text = _read(path)
    if text is None:
        return Settings()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: invalid TOML: {error}") from None
    except (ValueError, RecursionError) as error:  # 5000-digit integers, deeply nested arrays
        detail = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise SettingsError(f"{path}: invalid TOML: {_shown(detail, 80)}") from None
    known = {f.name for f in fields(Settings)}
    values: dict[str, float | int | str] = {}
    for key, value in raw.items():
        if key not in known:
            names = ", ".join(sorted(known))
            raise SettingsError(f"{path}: unknown setting {_shown(key)} (known: {names})")
        types, kind = _KINDS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise SettingsError(f"{path}: {key} must be {kind}, got {_shown(value)}")
        values[key] = value
    try:
        return Settings(**values)  # type: ignore[arg-type]
    except SettingsError as error:
        raise SettingsError(f"{path}: {error}") from None


# --- personal FSRS parameters ----------------------------------------------------------------
FSRS_PARAMETER_COUNT = 21  # FSRS-6, what the fsrs package (py-fsrs 6) schedules with


def checked_fsrs_parameters(values: object) -> tuple[float, ...]:
    """`values` as FSRS-6 parameters the fsrs package accepts: 21 finite numbers within its
    bounds; else a one-line SettingsError."""
    if not isinstance(values, (list, tuple)):
        raise SettingsError(f"fsrs_parameters must be a list of {FSRS_PARAMETER_COUNT} numbers")
    if len(values) != FSRS_PARAMETER_COUNT:
        raise SettingsError(
            f"fsrs_parameters must have {FSRS_PARAMETER_COUNT} numbers (FSRS-6), got {len(values)}"
        )
    numbers: list[float] = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SettingsError(f"fsrs_parameters[{index}] must be a number, got {_shown(value)}")
        if not math.isfinite(value):
            raise SettingsError(f"fsrs_parameters[{index}] must be a finite number, got {value}")
        numbers.append(float(value))
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    for index, (value, low, high) in enumerate(
        zip(numbers, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True)
    ):
        if not low <= value <= high:
            raise SettingsError(f"fsrs_parameters[{index}] = {value} is outside {low}..{high}")
    return tuple(numbers)


_FSRS_LINE = re.compile(r"^fsrs_parameters\s*=\s*\[[^\]]*\][^\n]*\n?", re.MULTILINE)


def save_fsrs_parameters(parameters: Sequence[float], path: Path | None = None) -> Path:
    """Write `parameters` as `fsrs_parameters` into settings.toml, keeping every other line
    (and comment); the file is replaced atomically and only if it still loads. Returns the path.
    SettingsError (one line) when the file is invalid or cannot be written."""
    path = path or settings_path()
    checked = checked_fsrs_parameters(list(parameters))
    text = _read(path) or ""
    line = "fsrs_parameters = [" + ", ".join(repr(round(v, 6)) for v in checked) + "]\n"
    if _FSRS_LINE.search(text):
        text = _FSRS_LINE.sub(lambda _m: line, text, count=1)
    else:
        text = text + ("" if not text or text.endswith("\n") else "\n") + line
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        try:
            load_settings(temporary)  # never replace a good file with one that does not load
        except SettingsError as error:
            detail = str(error).removeprefix(f"{temporary}: ")
            raise SettingsError(f"{path}: cannot update fsrs_parameters: {detail}") from None
        os.replace(temporary, path)
    except OSError as error:
        raise SettingsError(f"{path}: cannot write settings: {error}") from None
    finally:
        temporary.unlink(missing_ok=True)
    return path
