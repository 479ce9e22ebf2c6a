"""Numbers cards: variables drawn per review and an answer computed from them (stdlib only).

A card's `numbers:` block declares variables (a range with a step, or a list of choices, and a
unit), optional named intermediate values (`let:`) and the answer's formula. Formulas use a tiny
arithmetic language, parsed here and never passed to `eval`:

expr   := term (("+" | "-") term)*
term   := unary (("*" | "/") unary)*
unary  := ("-" | "+") unary | power
power  := atom ("^" unary)?
atom   := NUMBER | NAME | FUNC "(" expr ("," expr)* ")" | "(" expr ")"
FUNC   := min | max | ceil | floor | sqrt | log2 | log10 | ln | round

Text of the card names values in braces (`{gpus}`, `{answer}`); they are filled with the drawn
and computed numbers. The same seed always draws the same numbers.
"""

from __future__ import annotations

import math
import random
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_FORMULA_CHARS = 400
MAX_DEPTH = 30
MAX_VARIABLES = 16
MAX_STEPS = 100_000  # values in one variable's range
ANSWER = "answer"

_FUNCTIONS: dict[str, tuple[int, Callable[..., float]]] = {
    "min": (-1, min),
    "max": (-1, max),
    "ceil": (1, lambda x: float(math.ceil(x))),
    "floor": (1, lambda x: float(math.floor(x))),
    "sqrt": (1, math.sqrt),
    "log2": (1, math.log2),
    "log10": (1, math.log10),
    "ln": (1, math.log),
    "round": (1, lambda x: float(round(x))),
}
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[a-z_][a-z0-9_]*)|(?P<op>[-+*/^(),]))"
)
NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")

# An expression tree: ("num", value) | ("var", name) | ("neg", e) | (op, a, b) | ("call", f, args)
Node = tuple[Any, ...]


class NumbersError(ValueError):
    """A formula that does not parse or cannot be computed; the message is one line."""


# --- parsing ------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, text: str, names: frozenset[str]) -> None:
        if len(text) > MAX_FORMULA_CHARS:
            raise NumbersError(f"formula longer than {MAX_FORMULA_CHARS} characters")
        self.tokens = self._tokenize(text)
        self.at = 0
        self.names = names
        self.depth = 0

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        at = 0
        while at < len(text.rstrip()):
            match = _TOKEN.match(text, at)
            if match is None or match.end() == at:
                raise NumbersError(f"unexpected {text[at:].strip()[:1]!r} in formula")
            kind = next(k for k in ("num", "name", "op") if match.group(k) is not None)
            tokens.append((kind, match.group(kind)))
            at = match.end()
        return tokens

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise NumbersError("formula ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def expect(self, op: str) -> None:
        if self.peek() != op:
            raise NumbersError(f"expected {op!r} in formula")
        self.at += 1

    def parse(self) -> Node:
        if not self.tokens:
            raise NumbersError("empty formula")
        node = self.expr()
        if self.at != len(self.tokens):
            raise NumbersError(f"unexpected {self.peek()!r} in formula")
        return node

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NumbersError(f"formula nested deeper than {MAX_DEPTH}")
        node = self.term()
        while self.peek() in ("+", "-"):
            node = (self.take()[1], node, self.term())
        self.depth -= 1
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek() in ("*", "/"):
            node = (self.take()[1], node, self.unary())
        return node

    def unary(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NumbersError(f"formula nested deeper than {MAX_DEPTH}")
        if self.peek() in ("-", "+"):
            sign = self.take()[1]
            inner = self.unary()
            node = ("neg", inner) if sign == "-" else inner
        else:
            node = self.atom()
            if self.peek() == "^":
                self.take()
                node = ("^", node, self.unary())
        self.depth -= 1
        return node

    def atom(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            return ("num", float(text))
        if text == "(":
            node = self.expr()
            self.expect(")")
            return node
        if kind != "name":
            raise NumbersError(f"unexpected {text!r} in formula")
        if text in _FUNCTIONS:
            self.expect("(")
            args = [self.expr()]
            while self.peek() == ",":
                self.take()
                args.append(self.expr())
            self.expect(")")
            arity = _FUNCTIONS[text][0]
            if (arity == -1 and len(args) < 2) or (arity != -1 and len(args) != arity):
                wanted = "2 or more arguments" if arity == -1 else f"{arity} argument"
                raise NumbersError(f"{text}() takes {wanted}, got {len(args)}")
            return ("call", text, tuple(args))
        if text not in self.names:
            raise NumbersError(f"unknown name '{text}' in formula")
        return ("var", text)


def parse_formula(text: str, names: frozenset[str] | set[str]) -> Node:
    """The formula's tree; NumbersError naming the first problem."""
    return _Parser(text, frozenset(names)).parse()


def evaluate(node: Node, values: Mapping[str, float]) -> float:
    """The formula's value; NumbersError for a division by zero, a math domain error or a
    result that is not finite."""
    try:
        result = _eval(node, values)
    except ZeroDivisionError:
        raise NumbersError("division by zero") from None
    except (ValueError, OverflowError) as error:
        raise NumbersError(f"cannot compute: {error}") from None
    if not math.isfinite(result):
        raise NumbersError("the result is not a finite number")
    return result


def _eval(node: Node, values: Mapping[str, float]) -> float:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        return values[node[1]]
    if kind == "neg":
        return -_eval(node[1], values)
    if kind == "call":
        return float(_FUNCTIONS[node[1]][1](*(_eval(arg, values) for arg in node[2])))
    left, right = _eval(node[1], values), _eval(node[2], values)
    if kind == "+":
        return left + right
    if kind == "-":
        return left - right
    if kind == "*":
        return left * right
    if kind == "/":
        return left / right
    return math.pow(left, right)  # "^": raises OverflowError instead of returning inf


# --- a card's spec ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variable:
    name: str
    values: tuple[float, ...] | None  # the choices, or None for a range
    low: float
    high: float
    step: float
    unit: str

    def draw(self, rng: random.Random) -> float:
        if self.values is not None:
            return self.values[rng.randrange(len(self.values))]
        count = round((self.high - self.low) / self.step)
        return _tidy(self.low + rng.randint(0, count) * self.step)


@dataclass(frozen=True)
class NumbersSpec:
    variables: tuple[Variable, ...]
    lets: tuple[tuple[str, Node], ...]
    answer: Node
    unit: str
    tolerance: float

    def names(self) -> set[str]:
        return {v.name for v in self.variables} | {name for name, _ in self.lets} | {ANSWER}


@dataclass(frozen=True)
class Instance:
    """One drawing: the variables' values, the intermediate values and the answer."""

    seed: int
    drawn: dict[str, float]
    lets: dict[str, float]
    answer: float
    spec: NumbersSpec

    def values(self) -> dict[str, float]:
        return {**self.drawn, **self.lets, ANSWER: self.answer}


def _tidy(value: float) -> float:
    """A drawn value without float noise (0.1 * 3 -> 0.3)."""
    return float(f"{value:.12g}")


def variable_from(name: str, data: Mapping[str, Any]) -> Variable:
    """One variable from its plain data; NumbersError naming what is wrong."""
    if not NAME.match(name) or name in _FUNCTIONS or name == ANSWER:
        raise NumbersError(f"'{name}' cannot name a variable")
    unit = str(data.get("unit") or "")
    choices = data.get("choices") or []
    bounds = [data.get(key) for key in ("min", "max", "step")]
    if choices and any(b is not None for b in bounds):
        raise NumbersError(f"{name}: give either choices or min/max/step, not both")
    if choices:
        values = tuple(float(c) for c in choices)
        if not all(math.isfinite(v) for v in values):
            raise NumbersError(f"{name}: choices must be finite numbers")
        return Variable(name, values, min(values), max(values), 0.0, unit)
    if any(b is None for b in bounds):
        raise NumbersError(f"{name}: needs choices, or min, max and step")
    low, high, step = (float(b) for b in bounds)  # type: ignore[arg-type]
    if not all(math.isfinite(v) for v in (low, high, step)) or step <= 0 or high < low:
        raise NumbersError(f"{name}: needs finite min <= max and a step > 0")
    if (high - low) / step > MAX_STEPS:
        raise NumbersError(f"{name}: more than {MAX_STEPS} values between min and max")
    return Variable(name, None, low, high, step, unit)


def spec_from(data: Mapping[str, Any]) -> NumbersSpec:
    """A spec from the `numbers:` block as plain data (what the loader validated and cached)."""
    raw_vars = data.get("vars") or {}
    if not raw_vars or len(raw_vars) > MAX_VARIABLES:
        raise NumbersError(f"a numbers card declares 1 to {MAX_VARIABLES} vars")
    variables = tuple(variable_from(name, raw) for name, raw in raw_vars.items())
    names = {v.name for v in variables}
    lets: list[tuple[str, Node]] = []
    for name, formula in (data.get("let") or {}).items():
        if not NAME.match(name) or name in _FUNCTIONS or name == ANSWER or name in names:
            raise NumbersError(f"'{name}' cannot name a let value")
        try:
            lets.append((name, parse_formula(str(formula), names)))
        except NumbersError as error:
            raise NumbersError(f"let {name}: {error}") from None
        names.add(name)
    try:
        answer = parse_formula(str(data.get("answer") or ""), names)
    except NumbersError as error:
        raise NumbersError(f"answer: {error}") from None
    tolerance = float(data.get("tolerance", 0.1))
    return NumbersSpec(variables, tuple(lets), answer, str(data.get("unit") or ""), tolerance)


def draw(spec: NumbersSpec, seed: int) -> Instance:
    """Values for every variable from `seed`, and what follows from them."""
    rng = random.Random(seed)
    drawn = {v.name: v.draw(rng) for v in spec.variables}
    values = dict(drawn)
    lets: dict[str, float] = {}
    for name, node in spec.lets:
        try:
            lets[name] = values[name] = evaluate(node, values)
        except NumbersError as error:
            raise NumbersError(f"let {name}: {error}") from None
    try:
        answer = evaluate(spec.answer, values)
    except NumbersError as error:
        raise NumbersError(f"answer: {error}") from None
    return Instance(seed, drawn, lets, answer, spec)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


# --- showing ------------------------------------------------------------------------------------
def format_number(value: float) -> str:
    """Three significant figures, digits grouped below 10^7, else as 1.23e14."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e7 or magnitude < 1e-4:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    digits = max(0, 2 - math.floor(math.log10(magnitude)))
    rounded = round(value, digits)
    if float(rounded).is_integer() and abs(rounded) >= 1:
        return f"{int(rounded):,}"
    return f"{rounded:,.{digits}f}".rstrip("0").rstrip(".")


def fill(text: str, instance: Instance) -> str:
    """`text` with each `{name}` of the instance replaced by its value; other braces stay."""
    values = instance.values()

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return format_number(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(replace, text)


def _with_unit(value: float, unit: str) -> str:
    return f"{format_number(value)} {unit}".rstrip()


def answer_lines(instance: Instance) -> str:
    """Markdown for the back: the computed answer, the tolerance, the drawn numbers."""
    spec = instance.spec
    drawn = ", ".join(
        f"{v.name} = {_with_unit(instance.drawn[v.name], v.unit)}" for v in spec.variables
    )
    return (
        f"**Answer: {_with_unit(instance.answer, spec.unit)}** "
        f"(within ±{format_number(spec.tolerance * 100)} % counts)\n\n"
        f"Drawn: {drawn} (seed {instance.seed})"
    )


def relative_error(typed: float, instance: Instance) -> float:
    """|typed - answer| / |answer| (the absolute error when the answer is 0)."""
    scale = abs(instance.answer) or 1.0
    return abs(typed - instance.answer) / scale


def spec_of(card: Any) -> NumbersSpec | None:
    """The spec of a card (a models.Card or an index.CardRecord), None for other cards."""
    raw = getattr(card, "numbers", None)
    if raw is None:
        return None
    data = raw if isinstance(raw, dict) else raw.model_dump(mode="json")
    return spec_from(data)


# --- a card on screen ---------------------------------------------------------------------------
def fresh_instance(card: Any, seed: int | None = None) -> Instance | None:
    """A new drawing for a numbers card (a random seed unless given), None for other cards. A
    drawing that cannot be computed falls back to seed 0, which the loader computed."""
    spec = spec_of(card)
    if spec is None:
        return None
    try:
        return draw(spec, secrets.randbelow(2**31) if seed is None else seed)
    except NumbersError:
        return draw(spec, 0)


FIXED_SEED = 0  # the drawing shown outside review: the loader computed it when the deck loaded


def fixed_instance(card: Any) -> Instance | None:
    """The one drawing a numbers card is shown with outside review (the Anki export, the card
    browser, `drill cards`), None for other cards."""
    return fresh_instance(card, seed=FIXED_SEED)


def variable_range(variable: Variable) -> str:
    """What a variable is drawn from: `n: 2 / 4 / 8 GPUs`, `mfu: 0.3 to 0.55 in steps of 0.05`
    (choices apart with slashes: a number may hold a comma, 1,024)."""
    if variable.values is not None:
        choices = " / ".join(format_number(v) for v in variable.values)
        return f"{variable.name}: {choices} {variable.unit}".rstrip()
    low, high, step = (format_number(v) for v in (variable.low, variable.high, variable.step))
    return f"{variable.name}: {low} to {high} in steps of {step} {variable.unit}".rstrip()


def drawn_anew_line(instance: Instance) -> str:
    """Plain text saying that the values shown are one drawing, and what each review draws from."""
    ranges = "; ".join(variable_range(v) for v in instance.spec.variables)
    return (
        f"Numbers card: shown with one fixed drawing (seed {instance.seed}); each review draws "
        f"new values ({ranges})."
    )


def shown_text(text: str, instance: Instance | None) -> str:
    """A card's front or `more:` with the drawn numbers filled in."""
    return text if instance is None else fill(text, instance)


def shown_back(back: str, instance: Instance | None) -> str:
    """A card's back; for a numbers card, filled in and followed by the answer lines."""
    if instance is None:
        return back
    return f"{fill(back, instance).rstrip()}\n\n{answer_lines(instance)}"


# --- a typed answer ------------------------------------------------------------------------------
def parse_typed(text: str) -> float | None:
    """A number the user typed (`1,234`, `1.2e3`, `45 %`), None when it is not one."""
    cleaned = text.strip().removesuffix("%").replace(",", "").replace("_", "").strip()
    if len(cleaned) > 40:
        return None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def suggested_rating(typed: float, instance: Instance) -> int:
    """The review rating (1-4) a typed answer suggests; the names live with the ratings
    (drill.review.ratings), which this layer sits below.

    Easy within a third of the tolerance, Good within it, Hard within twice it, else Again."""
    error, tolerance = relative_error(typed, instance), instance.spec.tolerance
    if error <= tolerance / 3:
        return 4
    if error <= tolerance:
        return 3
    return 2 if error <= 2 * tolerance else 1


def typed_line(typed: float, instance: Instance) -> str:
    """Markdown: what the user typed and how far off it is (the screen adds the rating)."""
    off = format_number(relative_error(typed, instance) * 100)
    return f"You answered {_with_unit(typed, instance.spec.unit)}: {off} % off"
