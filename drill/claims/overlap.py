"""Can two claims hold at the same time? Decides it for the claim grammar, without running anything.

Used to reject predict blocks whose choices are not mutually exclusive: each comparison bounds one
observation; two claims can both hold when, for every observation both mention, the bounds
intersect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from drill.claims.grammar import Claim, Comparison, parse_claim


@dataclass
class _Bounds:
    """The set of values an observation may take: an interval plus equalities and exclusions."""

    low: float = -math.inf
    low_open: bool = False
    high: float = math.inf
    high_open: bool = False
    equals: list[Any] = field(default_factory=list)
    excluded: list[Any] = field(default_factory=list)

    def add(self, comparison: Comparison) -> None:
        op, value = comparison.op, comparison.value
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if op == "==":
            self.equals.append(value)
        elif op == "!=":
            self.excluded.append(value)
        elif numeric:
            if op in (">", ">=") and (value > self.low or (value == self.low and op == ">")):
                self.low, self.low_open = float(value), op == ">"
            elif op in ("<", "<=") and (value < self.high or (value == self.high and op == "<")):
                self.high, self.high_open = float(value), op == "<"

    def _in_interval(self, value: Any) -> bool:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return self.low == -math.inf and self.high == math.inf
        above = value > self.low or (value == self.low and not self.low_open)
        below = value < self.high or (value == self.high and not self.high_open)
        return above and below

    def satisfiable(self) -> bool:
        if self.equals:
            first = self.equals[0]
            if any(other != first for other in self.equals[1:]):
                return False
            return first not in self.excluded and self._in_interval(first)
        if self.low > self.high:
            return False
        if self.low == self.high:
            return not (self.low_open or self.high_open) and self.low not in self.excluded
        # A non-empty open interval has infinitely many values: finite exclusions can't empty it.
        return True


def can_both_hold(first: Claim | str, second: Claim | str) -> bool:
    """True when some observations would make both claims hold."""
    claims = [parse_claim(c) if isinstance(c, str) else c for c in (first, second)]
    bounds: dict[str, _Bounds] = {}
    for claim in claims:
        for comparison in claim.comparisons:
            bounds.setdefault(comparison.name, _Bounds()).add(comparison)
    return all(b.satisfiable() for b in bounds.values())
