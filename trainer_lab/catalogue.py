"""The lab catalogue (torch-free): every package trainer_lab/labs/<name>/ whose __init__ has a SPEC.

Labs are found by folder, so adding a lab never touches this file. Only a lab's `__init__` (its
spec) is imported here: its `drive.py` is imported by the driver process when the lab runs
(`SPEC.driver` defaults to `<package>.drive:drive`), its `worker.py` (torch) in the launched
processes. A lab that fails to import
does not take the catalogue down: its error is kept in CATALOGUE_ERRORS (module -> one line) and
reported by `drill lab list`; the test suite asserts there are none.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from dataclasses import replace

from trainer_lab import labs
from trainer_lab.catalogue_types import LabSpec, ParamError

GROUP_ORDER = ("correctness", "failures", "performance", "")


class UnknownLabError(ParamError):
    """A lab name that is not in the catalogue; the message lists the valid names."""


CATALOGUE_ERRORS: dict[str, str] = {}


def _discover() -> dict[str, LabSpec]:
    found: list[LabSpec] = []
    for info in pkgutil.iter_modules(labs.__path__):
        if info.name.startswith("_") or not info.ispkg:
            continue
        name = f"{labs.__name__}.{info.name}"
        try:
            module = importlib.import_module(name)
        except Exception as error:  # one broken lab must not hide the others
            CATALOGUE_ERRORS[name] = f"{type(error).__name__}: {error}"
            continue
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, LabSpec):
            if not spec.driver:
                spec = replace(spec, driver=f"{module.__name__}.drive:drive")
            found.append(spec)
    found.sort(
        key=lambda s: (
            GROUP_ORDER.index(s.group) if s.group in GROUP_ORDER else len(GROUP_ORDER),
            s.name,
        )
    )
    names = [s.name for s in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate lab names: {', '.join(sorted(duplicates))}")
    return {s.name: s for s in found}


CATALOGUE: dict[str, LabSpec] = _discover()


def get_lab(name: str) -> LabSpec:
    try:
        return CATALOGUE[name]
    except KeyError:
        valid = ", ".join(CATALOGUE) or "none"
        raise UnknownLabError(f"unknown lab {name!r} (valid: {valid})") from None


def check_world_size(spec: LabSpec, world_size: int) -> int:
    if not spec.min_world_size <= world_size <= spec.max_world_size:
        raise ParamError(
            f"lab {spec.name}: world size {world_size} is out of range "
            f"[{spec.min_world_size}, {spec.max_world_size}]"
        )
    return world_size


def resolve_world_size(spec: LabSpec, world_size: int | None) -> int:
    """The lab's default when none is given; a given one (0 too) must be in range."""
    return check_world_size(spec, spec.default_world_size if world_size is None else world_size)


def check_timeout(timeout_s: float, what: str = "timeout") -> float:
    """A deadline must be a finite number of seconds above 0 (nan would disable it)."""
    finite = not isinstance(timeout_s, bool) and isinstance(timeout_s, int | float)
    if not finite or not math.isfinite(timeout_s) or timeout_s <= 0:
        raise ParamError(f"{what} must be a finite number of seconds above 0, got {timeout_s!r}")
    return float(timeout_s)
