"""The exercise catalogue (torch-free): every package trainer_lab/exercises/<pkg>/ with a SPEC.

Found by folder like the lab catalogue; only `__init__` is imported here. A broken exercise
is kept in CATALOGUE_ERRORS instead of taking the others down (a test asserts there are none).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace

from trainer_lab import exercises
from trainer_lab.exercises.spec import ExerciseSpec

CATALOGUE_ERRORS: dict[str, str] = {}


class UnknownExerciseError(LookupError):
    """A name that is not in the catalogue; the message lists the valid names."""


def _discover() -> dict[str, ExerciseSpec]:
    found: dict[str, ExerciseSpec] = {}
    for info in pkgutil.iter_modules(exercises.__path__):
        if info.name.startswith("_") or not info.ispkg:
            continue
        name = f"{exercises.__name__}.{info.name}"
        try:
            module = importlib.import_module(name)
        except Exception as error:  # one broken exercise must not hide the others
            CATALOGUE_ERRORS[name] = f"{type(error).__name__}: {error}"
            continue
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, ExerciseSpec):
            if spec.name in found:
                raise RuntimeError(f"duplicate exercise name: {spec.name}")
            found[spec.name] = replace(spec, package=name)
    return found


EXERCISES: dict[str, ExerciseSpec] = _discover()


def get_exercise(name: str) -> ExerciseSpec:
    try:
        return EXERCISES[name]
    except KeyError:
        valid = ", ".join(EXERCISES) or "none"
        raise UnknownExerciseError(f"unknown exercise {name!r} (valid: {valid})") from None
