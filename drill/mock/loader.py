"""Find and load mock-round definitions: bundled decks/round-*.yaml plus those in user deck dirs."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from decks import bundled_round_paths
from drill.mock.errors import MockError
from drill.mock.models import RoundDef


def load_round_file(path: Path) -> RoundDef:
    """Parse and validate one round file; every failure is a one-line MockError."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MockError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise MockError(f"{where}: YAML syntax error: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise MockError(f"{path}: a round file must be a mapping with `round`, `title`, `phases`")
    try:
        return RoundDef.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"]) or "(top)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise MockError(f"{path}: {loc}: {first['msg']}{more}") from exc


def round_paths(extra_dirs: list[Path] | None = None) -> list[Path]:
    paths = list(bundled_round_paths())
    for directory in extra_dirs or []:
        paths.extend(sorted(Path(directory).glob("round-*.yaml")))
    return paths


def list_rounds(extra_dirs: list[Path] | None = None) -> list[tuple[RoundDef, Path]]:
    """Every valid round; a broken user file raises (the CLI reports it in one line)."""
    rounds: dict[str, tuple[RoundDef, Path]] = {}
    for path in round_paths(extra_dirs):
        definition = load_round_file(path)
        rounds[definition.round] = (definition, path)  # user dirs come later and override
    return sorted(rounds.values(), key=lambda item: item[0].round)


def find_round(name: str, extra_dirs: list[Path] | None = None) -> RoundDef:
    """A round by id (`standard`), or by the path of a round file."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") and candidate.exists():
        return load_round_file(candidate)
    available = list_rounds(extra_dirs)
    for definition, _path in available:
        if definition.round == name:
            return definition
    names = ", ".join(d.round for d, _ in available) or "(none)"
    raise MockError(f"unknown round {name!r}; available: {names}")
