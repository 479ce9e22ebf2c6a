"""User settings: a small TOML file in drill_home(), read with tomllib. Missing file = defaults."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from drill.errors import SettingsError
from drill.paths import settings_path


@dataclass(frozen=True)
class Settings:
    desired_retention: float = 0.9  # FSRS target probability of recall at the due date
    new_cards_per_day: int = 20  # new cards introduced per day, across all decks
    learn_ahead_minutes: int = 20  # a card due again within this window comes back this session
    day_start_hour: int = 4  # local hour at which "today" starts (bury, daily new limit)

    def __post_init__(self) -> None:
        if not 0.7 <= self.desired_retention <= 0.99:
            raise SettingsError("desired_retention must be between 0.7 and 0.99")
        if not 0 <= self.new_cards_per_day <= 10_000:
            raise SettingsError("new_cards_per_day must be between 0 and 10000")
        if not 0 <= self.learn_ahead_minutes <= 24 * 60:
            raise SettingsError("learn_ahead_minutes must be between 0 and 1440")
        if not 0 <= self.day_start_hour <= 23:
            raise SettingsError("day_start_hour must be between 0 and 23")


_TYPES = {
    "desired_retention": (float, int),
    "new_cards_per_day": (int,),
    "learn_ahead_minutes": (int,),
    "day_start_hour": (int,),
}


def load_settings(path: Path | None = None) -> Settings:
    """Read settings.toml (top-level keys = Settings fields); SettingsError names the file."""
    path = path or settings_path()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read settings: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: invalid TOML: {error}") from None
    known = {f.name for f in fields(Settings)}
    values: dict[str, float | int] = {}
    for key, value in raw.items():
        if key not in known:
            names = ", ".join(sorted(known))
            raise SettingsError(f"{path}: unknown setting {key!r} (known: {names})")
        if isinstance(value, bool) or not isinstance(value, _TYPES[key]):
            raise SettingsError(f"{path}: {key} must be a number, got {value!r}")
        values[key] = value
    try:
        return Settings(**values)  # type: ignore[arg-type]
    except SettingsError as error:
        raise SettingsError(f"{path}: {error}") from None
