"""Where drill keeps its data. Everything hangs off drill_home(), overridable with DRILL_HOME."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

APP_NAME = "drill"


def drill_home() -> Path:
    """DRILL_HOME if set, else the platform user data dir (e.g. ~/.local/share/drill)."""
    override = os.environ.get("DRILL_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def database_path() -> Path:
    return drill_home() / "drill.sqlite3"


def backups_dir() -> Path:
    """Automatic and manual database backups (storage.backup.backups_dir of database_path())."""
    return drill_home() / "backups"


def settings_path() -> Path:
    return drill_home() / "settings.toml"


def runs_dir() -> Path:
    """Lab run directories (one per run) live here."""
    return drill_home() / "runs"


def cache_dir() -> Path:
    return drill_home() / "cache"


def user_deck_dirs(cli_dirs: Iterable[str | Path] | None = None) -> list[Path]:
    """Deck directories (or single deck files) from --decks DIR options, then DRILL_DECKS.

    DRILL_DECKS holds one or more paths separated by os.pathsep (':' on Unix).
    """
    found: list[Path] = [Path(d).expanduser() for d in (cli_dirs or [])]
    env = os.environ.get("DRILL_DECKS", "")
    found.extend(Path(part).expanduser() for part in env.split(os.pathsep) if part.strip())
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def new_run_dir(root: Path, name: str, when: datetime | None = None) -> Path:
    """A directory under `root` no run has used yet: NAME-YYYYmmdd-HHMMSS, then -2, -3, ...
    (a lab appends to its events files, so two runs must never share one)."""
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = root / f"{name}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path
