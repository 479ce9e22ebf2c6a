"""The lab catalogue (torch-free): every module trainer_lab/labs/<name>.py with a SPEC.

Lab modules are found by name, so adding a lab never touches this file. Modules whose name
ends in `_worker` import torch and are skipped. A lab module that fails to import does not take
the catalogue down: its error is kept in CATALOGUE_ERRORS (module -> one line) and reported by
`drill lab list`; the test suite asserts there are none.
"""

from __future__ import annotations

import importlib
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
        if info.name.startswith("_") or info.name.endswith("_worker"):
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
                spec = replace(spec, driver=f"{module.__name__}:drive")
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
