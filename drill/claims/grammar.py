"""A tiny, safe claim grammar over lab observations (never `eval`).

claim      := comparison ("and" comparison)*
comparison := NAME OP VALUE
NAME       := identifier, dots reach into nested observations (modes.full.max_abs_diff)
OP         := <  <=  >  >=  ==  !=
VALUE      := number | true | false | null | 'quoted' | "quoted" | bare-word
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<op><=|>=|==|!=|<|>)
      | (?P<str>'[^']*'|"[^"]*")
      | (?P<word>[A-Za-z0-9_.+\-]+)
    )""",
    re.VERBOSE,
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class ClaimError(ValueError):
    """A claim that does not parse, or names an observation that is missing."""


@dataclass(frozen=True)
class Comparison:
    name: str
    op: str
    value: Any

    def __str__(self) -> str:
        return f"{self.name} {self.op} {self.value!r}"


@dataclass(frozen=True)
class Claim:
    text: str
    comparisons: tuple[Comparison, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.comparisons)


@dataclass(frozen=True)
class ClaimOutcome:
    claim: str
    passed: bool
    observed: dict[str, Any]
    detail: str


class _NaN:
    """The literal `nan`: `== nan` holds for a NaN observation, `!= nan` for anything else.
    (float('nan') would not do: it is unequal to itself, also in the overlap checks.)"""

    def __repr__(self) -> str:
        return "nan"


NAN = _NaN()
_NOT_FINITE = {"nan": NAN, "inf": math.inf, "infinity": math.inf}


def _literal(token: str, quoted: bool) -> Any:
    if quoted:
        return token[1:-1]
    lowered = token.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    special = _NOT_FINITE.get(lowered.lstrip("+-"))
    if special is not None:
        return -special if lowered.startswith("-") and special is math.inf else special
    if _NUMBER.match(token):
        number = float(token)
        if not math.isfinite(number):
            raise ClaimError(f"{token} is too large a number (it reads as infinity)")
        integral = number.is_integer() and not re.search(r"[.eE]", token)
        return int(number) if integral else number
    return token


def _not_finite(value: Any) -> bool:
    return value is NAN or (isinstance(value, float) and math.isinf(value))


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        match = _TOKEN.match(stripped, pos)
        if not match or match.end() == pos:
            raise ClaimError(f"cannot read claim {text!r} at {stripped[pos:]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


def parse_claim(text: str) -> Claim:
    """Parse `name op value [and name op value ...]`; raise ClaimError with the reason."""
    tokens = _tokens(text)
    if not tokens:
        raise ClaimError("empty claim")
    comparisons: list[Comparison] = []
    i = 0
    while True:
        if i + 3 > len(tokens):
            raise ClaimError(f"claim {text!r} must read 'name op value'")
        (k_name, name), (k_op, op), (k_val, val) = tokens[i : i + 3]
        if k_name != "word" or not _NAME.match(name):
            raise ClaimError(f"claim {text!r}: {name!r} is not an observation name")
        if k_op != "op":
            raise ClaimError(f"claim {text!r}: expected one of < <= > >= == != after {name!r}")
        if k_val == "op":
            raise ClaimError(f"claim {text!r}: missing value after {op!r}")
        try:
            value = _literal(val, quoted=k_val == "str")
        except ClaimError as error:
            raise ClaimError(f"claim {text!r}: {error}") from None
        if _not_finite(value) and op not in ("==", "!="):
            # nan is unordered and every number is below inf: such a claim says nothing.
            raise ClaimError(
                f"claim {text!r}: {op} {val} says nothing (nan and inf only go with == and !=)"
            )
        comparisons.append(Comparison(name, op, value))
        i += 3
        if i == len(tokens):
            return Claim(text=text, comparisons=tuple(comparisons))
        if tokens[i] != ("word", "and"):
            raise ClaimError(f"claim {text!r}: expected 'and' before {tokens[i][1]!r}")
        i += 1


def lookup(observations: dict[str, Any], name: str) -> Any:
    """Value of a (dotted) observation name; ClaimError when the lab did not report it."""
    value: Any = observations
    for part in name.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise ClaimError(f"observation {name!r} was not reported by the lab")
    return value


def _compare(observed: Any, op: str, expected: Any) -> bool:
    if expected is NAN:  # result.json carries non-finite numbers as the strings "nan"/"inf"
        is_nan = (isinstance(observed, float) and math.isnan(observed)) or (
            isinstance(observed, str) and observed.lower() == "nan"
        )
        return is_nan if op == "==" else not is_nan
    if isinstance(observed, bool) or isinstance(expected, bool) or expected is None:
        if op == "==":
            return observed == expected
        if op == "!=":
            return observed != expected
        raise ClaimError(f"{op} needs numbers, got {observed!r} and {expected!r}")
    if isinstance(observed, int | float) and isinstance(expected, int | float):
        if isinstance(observed, float) and math.isnan(observed):
            return op == "!="
        return {
            "<": observed < expected,
            "<=": observed <= expected,
            ">": observed > expected,
            ">=": observed >= expected,
            "==": observed == expected,
            "!=": observed != expected,
        }[op]
    if op == "==":
        return str(observed) == str(expected)
    if op == "!=":
        return str(observed) != str(expected)
    raise ClaimError(f"{op} needs numbers, got {observed!r} and {expected!r}")


def evaluate(claim: Claim | str, observations: dict[str, Any]) -> ClaimOutcome:
    """Evaluate a claim; a missing observation or a type mismatch is a failed outcome."""
    parsed = parse_claim(claim) if isinstance(claim, str) else claim
    observed: dict[str, Any] = {}
    failures: list[str] = []
    for comparison in parsed.comparisons:
        try:
            value = lookup(observations, comparison.name)
            observed[comparison.name] = value
            if not _compare(value, comparison.op, comparison.value):
                wanted = f"{comparison.op} {comparison.value!r}"
                failures.append(f"{comparison.name} = {value!r}, not {wanted}")
        except ClaimError as error:
            failures.append(str(error))
    detail = "; ".join(failures) if failures else "holds"
    return ClaimOutcome(parsed.text, not failures, observed, detail)


def out_of_scope(where: str, observations: dict[str, Any]) -> str | None:
    """A card's `where:` against a run: None when its claims apply here (no `where:`, or it
    holds), else why they do not, e.g. "not where device == cpu (device=cuda)"."""
    if not where:
        return None
    outcome = evaluate(where, observations)
    if outcome.passed:
        return None
    observed = ", ".join(f"{name}={value}" for name, value in outcome.observed.items())
    return f"not where {where}" + (f" ({observed})" if observed else "")
