"""Lab metadata types: names, typed params, observations, checks. Importable without torch."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

ParamType = Literal["int", "float", "bool", "str", "choice"]


class ParamError(ValueError):
    """A param name or value a lab does not accept; the message lists the valid choices."""


@dataclass(frozen=True)
class ParamSpec:
    name: str
    type: ParamType
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def describe(self) -> str:
        if self.type == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        bounds = ""
        if self.minimum is not None or self.maximum is not None:
            bounds = f" in [{self.minimum if self.minimum is not None else '-inf'}, "
            bounds += f"{self.maximum if self.maximum is not None else 'inf'}]"
        return f"{self.type}{bounds}"

    def parse(self, text: str) -> Any:
        """Turn command-line text into a typed value (validated)."""
        raw: Any = text
        try:
            if self.type == "int":
                raw = int(text)
            elif self.type == "float":
                raw = float(text)
            elif self.type == "bool":
                lowered = text.strip().lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                raw = lowered in ("true", "1", "yes")
        except ValueError:
            raise ParamError(
                f"param {self.name}: {text!r} is not a valid {self.describe()}"
            ) from None
        return self.validate(raw)

    def validate(self, value: Any) -> Any:
        """Check a typed value (from YAML or parse); return it normalised."""
        bad = ParamError(f"param {self.name}: {value!r} is not a valid {self.describe()}")
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad
        elif self.type == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad
            value = float(value)
            if not math.isfinite(value):  # nan passes every bound check; inf means no limit
                raise ParamError(f"param {self.name}: {value!r} is not a finite number")
        elif self.type == "bool":
            if not isinstance(value, bool):
                raise bad
        elif self.type == "str":
            if not isinstance(value, str):
                raise bad
        elif self.type == "choice" and value not in self.choices:
            raise bad
        if self.minimum is not None and value < self.minimum:
            raise bad
        if self.maximum is not None and value > self.maximum:
            raise bad
        return value


@dataclass(frozen=True)
class ObservationSpec:
    name: str  # dotted names reach into nested observations (modes.full.max_abs_diff)
    help: str
    unit: str = ""
    # Computed from the params or the lab's fixed set-up (a formula, a dtype limit, a size),
    # not observed in the run: a card claim over it restates its inputs (`drill verify
    # --strength` flags one).
    derived: bool = False


@dataclass(frozen=True)
class CheckSpec:
    name: str
    help: str


@dataclass(frozen=True)
class LabSpec:
    name: str
    summary: str
    params: tuple[ParamSpec, ...] = ()
    observations: tuple[ObservationSpec, ...] = ()
    checks: tuple[CheckSpec, ...] = ()
    default_world_size: int = 2
    min_world_size: int = 2
    max_world_size: int = 16
    group: str = ""  # correctness | failures | performance (orders `drill lab list`)
    timeout_s: float = 120.0
    # "module:function" of the torch-free driver that orchestrates the lab's torchrun launches.
    driver: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        valid = ", ".join(p.name for p in self.params) or "none"
        raise ParamError(f"lab {self.name} has no param {name!r} (valid: {valid})")

    def resolve_params(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with validated given values."""
        resolved = {p.name: p.default for p in self.params}
        for name, value in given.items():
            resolved[name] = self.param(name).validate(value)
        return resolved

    def observation_names(self) -> set[str]:
        return {o.name for o in self.observations}
