"""How long run folders are kept: the last `keep_runs` (settings.toml) of each kind, never one
that is in progress or that the newest results read.

A kind is the runs of one thing in one place: `runs/resume-*` (a lab), `runs/verify/resume-KEY-*`
(verify's runs of one lab with one cache key), `exercises/ddp-by-hand/checks/check-*` (one
exercise's checks). Only folders named NAME-YYYYmmdd-HHMMSS[-N] (drill.paths.new_run_dir) are
counted; a coding round's gradings (rounds/N/grades/M) belong to the round and stay.

Kept whatever their age: a folder whose run log row is `running`; the folder of the newest
finished run of each (kind, name, params, world size, lab version), which the Labs screen and
verify's cache read; and a folder changed in the last RECENT_S seconds (a run that has just
made its folder and not yet written its row). After a run finishes, RunRecorder prunes that
run's kind; `drill runs prune` prunes every kind.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from drill.paths import VERIFY_RUNS, runs_dir

DEFAULT_KEEP = 10  # drill.settings.Settings.keep_runs
RECENT_S = 3600.0
STAMPED = re.compile(r"^(?P<name>.+)-(?P<stamp>\d{8}-\d{6})(?:-(?P<n>\d+))?$")
_keep = DEFAULT_KEEP


def configure(keep: int) -> None:
    """The number of runs of each kind that after_run keeps (0: keep every run)."""
    global _keep
    _keep = keep


def kept_per_kind() -> int:
    return _keep


@dataclass
class Pruned:
    removed: list[tuple[Path, int]] = field(default_factory=list)  # (folder, bytes)
    kept: int = 0
    failed: list[str] = field(default_factory=list)  # one line per folder not removed

    @property
    def bytes_freed(self) -> int:
        return sum(size for _path, size in self.removed)


def run_roots(home: Path) -> list[Path]:
    """The folders that hold run folders under DRILL_HOME (`drill_home()`): its runs_dir(), the
    runs of `drill verify` in it, and each exercise's checks."""
    runs = runs_dir(home)
    roots = [runs, runs / VERIFY_RUNS]
    exercises = home / "exercises"
    if exercises.is_dir():
        roots.extend(sorted(p / "checks" for p in exercises.iterdir() if (p / "checks").is_dir()))
    return roots


def kind_of(folder: Path) -> str | None:
    """The kind of a run folder (its parent and name), None when it is not a stamped run."""
    found = STAMPED.match(folder.name)
    return None if found is None else f"{folder.parent}/{found['name']}"


def _order(folder: Path) -> tuple[str, int]:
    found = STAMPED.match(folder.name)
    assert found is not None
    return found["stamp"], int(found["n"] or 1)


def kinds(root: Path) -> dict[str, list[Path]]:
    """The run folders directly in `root` by kind, oldest first (symlinks are never runs)."""
    found: dict[str, list[Path]] = {}
    try:
        entries = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return found
    for entry in entries:
        folder = Path(entry.path)
        kind = kind_of(folder)
        if kind is not None and entry.is_dir(follow_symlinks=False):
            found.setdefault(kind, []).append(folder)
    for folders in found.values():
        folders.sort(key=_order)
    return found


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under `folder` (symlinks not followed)."""
    total = 0
    for top, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
    return total


def prune(
    roots: Iterable[Path],
    keep: int,
    protected: Iterable[str | Path],
    *,
    only_kind: str | None = None,
    dry_run: bool = False,
    now: Callable[[], float] = time.time,
) -> Pruned:
    """Remove all but the newest `keep` run folders of each kind under `roots` (of `only_kind`
    alone when given), never one in `protected` or changed in the last RECENT_S seconds."""
    keep_also = {os.path.realpath(p) for p in protected}
    pruned = Pruned()
    for root in roots:
        for kind, folders in kinds(root).items():
            if only_kind is not None and kind != only_kind:
                continue
            old = folders[: max(0, len(folders) - keep)]
            pruned.kept += len(folders) - len(old)
            for folder in old:
                if os.path.realpath(folder) in keep_also or _recent(folder, now()):
                    pruned.kept += 1
                    continue
                size = folder_bytes(folder)
                if not dry_run:
                    try:
                        shutil.rmtree(folder)
                    except OSError as error:
                        pruned.failed.append(f"{folder}: {error.strerror or error}")
                        continue
                pruned.removed.append((folder, size))
    return pruned


def _recent(folder: Path, now: float) -> bool:
    try:
        return now - folder.stat().st_mtime < RECENT_S
    except OSError:
        return True  # cannot tell: leave it


def after_run(run_dir: Path | str, protected: Iterable[str | Path]) -> Pruned | None:
    """Prune the kind of the run that just finished in `run_dir` (None when nothing is pruned:
    keep_runs 0, or not a stamped run folder)."""
    folder = Path(run_dir)
    kind = kind_of(folder)
    if _keep <= 0 or kind is None:
        return None
    return prune([folder.parent], _keep, [*protected, folder], only_kind=kind)
