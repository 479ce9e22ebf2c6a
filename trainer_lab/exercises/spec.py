"""What an exercise declares (torch-free): its SPEC in trainer_lab/exercises/<pkg>/__init__.py."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ExerciseSpec:
    name: str  # stable id (kebab-case), what cards link with `exercise: NAME`
    title: str
    topic: str
    summary: str  # the task in a sentence or two
    file: str  # the file the user edits, e.g. "sync.py"
    checks: tuple[tuple[str, str], ...]  # (check name, what it observes), in report order
    hints: tuple[str, ...]  # 1-3, shown one at a time
    world_size: int = 2  # ranks under torchrun; 0 runs one plain process
    timeout_s: float = 40.0
    package: str = ""  # filled in by the catalogue

    @property
    def folder(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise LookupError(f"exercise package {self.package} not found")
        return Path(next(iter(spec.submodule_search_locations)))

    @property
    def starter_path(self) -> Path:
        return self.folder / "starter.py"

    @property
    def solution_path(self) -> Path:
        return self.folder / "solution.py"

    @property
    def checker_module(self) -> str:
        return f"{self.package}.check"

    def check_names(self) -> list[str]:
        return [name for name, _ in self.checks]
