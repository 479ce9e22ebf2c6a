"""Where drill keeps its data. Everything hangs off drill_home(), overridable with DRILL_HOME."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
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


RUNS_FOLDER = "runs"  # under DRILL_HOME; this is the name's one copy
VERIFY_RUNS = "verify"  # runs_dir()'s folder for the runs of `drill verify`


def runs_dir(home: Path | None = None) -> Path:
    """Lab run directories (one per run) live here (under `home`, default drill_home())."""
    return (home or drill_home()) / RUNS_FOLDER


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
    """Create and return a directory under `root` that is this run's alone:
    NAME-YYYYmmdd-HHMMSS, then -2, -3, ... (a lab appends to its events files, so two runs must
    never share one). Each name is claimed with one os.mkdir, which fails when the name exists:
    two runs started in the same second, in threads or in processes, get two directories, and
    a directory that is already there is never reused. OSError when `root` cannot be made."""
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = f"{name}-{stamp}"
    return _claim(root, lambda n: base if n == 1 else f"{base}-{n}", 1)


def new_numbered_dir(root: Path) -> Path:
    """Create and return root/N for the first free N after the highest number in `root`
    (a round's gradings: grades/1, grades/2, ...), claimed atomically like new_run_dir."""
    root.mkdir(parents=True, exist_ok=True)
    taken = (int(p.name) for p in root.iterdir() if p.name.isdigit() and p.name.isascii())
    return _claim(root, str, 1 + max(taken, default=0))


def _claim(root: Path, name_for: Callable[[int], str], first: int) -> Path:
    """The first root/name_for(n), n = first, first + 1, ..., that this call created."""
    root.mkdir(parents=True, exist_ok=True)
    number = first
    while True:
        path = root / name_for(number)
        try:
            os.mkdir(path)
        except FileExistsError:
            number += 1
            continue
        return path
