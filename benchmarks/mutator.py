"""Mutants of one Python file, for testing the checks that grade it (torch-free, stdlib only).

    for m in mutants(source):            # deterministic: the same source gives the same list
        print(m.index, m.key, m.describe())
        compile_error(m.source)          # None, or why the mutant does not compile ("invalid")
    picked = sample(mutants(source), 25, seed=0)

Why an AST mutator of our own and not mutmut or cosmic-ray: those drive a test command over an
installed package, mutating its files in place (or in a copy of the whole tree) and reading the
command's exit status. Here the unit under mutation is one standalone file (an exercise's model
answer, the coding round's train.py) that is never imported by the code that judges it: a checker
runs it in a subprocess through the harness and the verdict is a result with named checks. We
want the mutated text handed to that harness as a file, the names of the checks that killed it,
and nothing written next to the original. A small mutator over `ast` does exactly that in a few
hundred lines with no dependency, and lets us add the operators that matter for distributed training
code (collective arguments, ReduceOp, dropping a context manager such as Join or no_sync).

Each mutant changes one node. Its text is the original source with that node's span replaced by
the mutated node (ast.unparse), so the rest of the file, comments included, stays as written;
when the splice would not reproduce the intended tree (an odd span), the whole module is
unparsed instead. Operators (`OPERATORS`):

- compare: `<`↔`<=`, `>`↔`>=`, `==`↔`!=`, `is`↔`is not`, `in`↔`not in`
- arith: `+`↔`-`, `*`↔`/`, `//`→`/`, `%`→`//`, `**`→`*` (also in `+=` etc.)
- boolean: `and`↔`or`, `not x`→`x`
- constant: True↔False, 0→1, 1→0, n→n+1 (ints and floats; not strings, not None)
- delete: a statement → `pass` (not docstrings, imports, definitions, `pass`, `return x`)
- return_none: `return x` → `return None`
- keyword: a call loses one keyword argument
- collective: `ReduceOp.X` → another op; a collective's first two positional arguments swapped;
  its `src=`/`dst=` → another rank; a collective with no `op=` gets `op=...ReduceOp.MAX`
- context: `with cm:` → `with contextlib.nullcontext():` (items without `as`)

Docstrings, annotations and `from __future__` lines are never mutated.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

OPERATORS = (
    "compare",
    "arith",
    "boolean",
    "constant",
    "delete",
    "return_none",
    "keyword",
    "collective",
    "context",
)

COMPARE_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
ARITH_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
BOOL_SWAPS: dict[type, type] = {ast.And: ast.Or, ast.Or: ast.And}
REDUCE_OP_SWAPS = {
    "SUM": "MAX",
    "AVG": "SUM",
    "MAX": "SUM",
    "MIN": "MAX",
    "PRODUCT": "SUM",
    "BAND": "BOR",
    "BOR": "BAND",
}
COLLECTIVES = frozenset(
    {
        "all_reduce",
        "reduce",
        "broadcast",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "broadcast_object_list",
        "gather",
        "scatter",
        "send",
        "recv",
        "isend",
        "irecv",
        "all_to_all",
    }
)
REDUCING = frozenset({"all_reduce", "reduce", "reduce_scatter", "reduce_scatter_tensor"})
DELETABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.If,
    ast.For,
    ast.While,
    ast.With,
    ast.Try,
)
NULL_CONTEXT = "__import__('contextlib').nullcontext()"

# A rule: (node, parent) -> replacement node (a mutated copy), or None when it does not apply.
Rule = Callable[[ast.AST, ast.AST | None], ast.AST | None]


@dataclass(frozen=True)
class Mutant:
    index: int  # position in mutants(source)
    operator: str  # one of OPERATORS
    description: str  # what changed, e.g. "< -> <="
    line: int  # 1-based line of the mutated node in the original
    before: str  # that line in the original, stripped
    after: str  # the same line in the mutant, stripped
    source: str  # the whole mutated file

    @property
    def key(self) -> str:
        """A name that survives edits elsewhere in the file (no line number, no index)."""
        return f"{self.operator}: {self.before} :: {self.description}"

    def describe(self) -> str:
        return f"#{self.index} line {self.line} [{self.operator}] {self.description}: {self.before}"


def _name(op: ast.AST) -> str:
    return {
        ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
        ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+",
        ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
        ast.Pow: "**", ast.And: "and", ast.Or: "or",
    }.get(type(op), type(op).__name__)  # fmt: skip


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and isinstance(parent, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and bool(parent.body)
        and parent.body[0] is node
    )


def _walk(node: ast.AST, parent: ast.AST | None = None) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """Pre-order, in field order; skips docstrings, annotations and __future__ imports."""
    yield node, parent
    for field, value in ast.iter_fields(node):
        if field in ("annotation", "returns", "type_comment"):
            continue
        children = value if isinstance(value, list) else [value]
        for child in children:
            if not isinstance(child, ast.AST) or _is_docstring(child, node):
                continue
            if isinstance(child, ast.ImportFrom) and child.module == "__future__":
                continue
            yield from _walk(child, node)


# ---- the rules: each yields (operator, description, replacement) for one node ----------------


def _rules(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, str, ast.AST]]:
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in COMPARE_FLIPS:
                new = copy.deepcopy(node)
                new.ops[i] = COMPARE_FLIPS[type(op)]()
                yield "compare", f"{_name(op)} -> {_name(new.ops[i])}", new
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in ARITH_SWAPS:
        new = copy.deepcopy(node)
        new.op = ARITH_SWAPS[type(node.op)]()
        eq = "=" if isinstance(node, ast.AugAssign) else ""
        yield "arith", f"{_name(node.op)}{eq} -> {_name(new.op)}{eq}", new
    if isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = BOOL_SWAPS[type(node.op)]()
        yield "boolean", f"{_name(node.op)} -> {_name(new.op)}", new
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "boolean", "not x -> x", copy.deepcopy(node.operand)
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            yield "constant", f"{value} -> {not value}", ast.Constant(not value)
        elif isinstance(value, int | float):
            new_value = {0: 1, 1: 0}.get(value, value + 1) if isinstance(value, int) else (
                1.0 if value == 0 else value + 1)  # fmt: skip
            yield "constant", f"{value!r} -> {new_value!r}", ast.Constant(new_value)
    if isinstance(node, ast.Return) and not (
        node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        yield "return_none", "return x -> return None", ast.Return(ast.Constant(None))
    returns_value = isinstance(node, ast.Return) and not (
        node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
    )
    if isinstance(node, DELETABLE) and not returns_value:  # `return x`: see return_none
        yield "delete", f"{type(node).__name__.lower()} statement -> pass", ast.Pass()
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            if kw.arg is None:
                continue
            new = copy.deepcopy(node)
            del new.keywords[i]
            yield "keyword", f"drop {kw.arg}=", new
        yield from _collective_rules(node)
    if isinstance(node, ast.Attribute) and node.attr in REDUCE_OP_SWAPS:
        owner = node.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "ReduceOp") or (
            isinstance(owner, ast.Name) and owner.id == "ReduceOp"
        ):
            new = copy.deepcopy(node)
            new.attr = REDUCE_OP_SWAPS[node.attr]
            yield "collective", f"ReduceOp.{node.attr} -> ReduceOp.{new.attr}", new
    if (
        isinstance(parent, ast.withitem)
        and node is parent.context_expr
        and parent.optional_vars is None
    ):
        replacement = ast.parse(NULL_CONTEXT, mode="eval").body
        yield "context", "with cm -> with nullcontext()", replacement


def _collective_rules(call: ast.Call) -> Iterator[tuple[str, str, ast.AST]]:
    name = _call_name(call)
    if name not in COLLECTIVES:
        return
    if len(call.args) >= 2:
        new = copy.deepcopy(call)
        new.args[0], new.args[1] = new.args[1], new.args[0]
        yield "collective", f"{name}: swap the first two arguments", new
    for i, kw in enumerate(call.keywords):
        if kw.arg in ("src", "dst"):
            zero = isinstance(kw.value, ast.Constant) and kw.value.value == 0
            new = copy.deepcopy(call)
            new.keywords[i].value = ast.Constant(1 if zero else 0)
            yield "collective", f"{name}: {kw.arg}= -> {1 if zero else 0}", new
    if (
        name in REDUCING
        and isinstance(call.func, ast.Attribute)
        and not any(kw.arg == "op" for kw in call.keywords)
        and len(call.args) < 2
    ):
        new = copy.deepcopy(call)
        root = copy.deepcopy(call.func.value)
        op = ast.Attribute(ast.Attribute(root, "ReduceOp", ast.Load()), "MAX", ast.Load())
        new.keywords.append(ast.keyword("op", op))
        yield "collective", f"{name}: op= -> ReduceOp.MAX", new


# ---- building the mutated source ------------------------------------------------------------


def _offsets(source: str) -> list[int]:
    """Character offset of each line's start (1-based line i starts at offsets[i - 1])."""
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def _span(source: str, starts: list[int], node: ast.AST) -> tuple[int, int]:
    """(start, end) character offsets of the node (ast offsets are in UTF-8 bytes per line)."""

    def at(line: int, col: int) -> int:
        text = source[starts[line - 1] : starts[line]]
        return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8"))

    return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)


def _replace_in(tree: ast.AST, target_index: int, replacement: ast.AST) -> ast.AST:
    """A copy of `tree` with the `target_index`-th node of _walk replaced."""
    tree = copy.deepcopy(tree)
    for i, (node, parent) in enumerate(_walk(tree)):
        if i != target_index:
            continue
        assert parent is not None
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, replacement)
                return tree
            if isinstance(value, list) and any(v is node for v in value):
                value[[id(v) for v in value].index(id(node))] = replacement
                return tree
    raise LookupError(target_index)


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, include_attributes=False) == ast.dump(b, include_attributes=False)


def mutants(source: str, filename: str = "<mutant>") -> list[Mutant]:
    """Every mutant of `source`, in a fixed order (node order in the file, then rule order).
    Mutants whose text is the same as the original's tree (a no-op) are left out."""
    tree = ast.parse(source, filename)
    lines = source.splitlines()
    starts = _offsets(source)
    found: list[Mutant] = []
    for index, (node, parent) in enumerate(_walk(tree)):
        if parent is None or not hasattr(node, "lineno"):
            continue
        for operator, description, replacement in _rules(node, parent):
            expected = _replace_in(tree, index, replacement)
            if _same(expected, tree):
                continue
            start, end = _span(source, starts, node)
            text = source[:start] + ast.unparse(replacement) + source[end:]
            try:
                spliced_ok = _same(ast.parse(text, filename), expected)
            except SyntaxError:
                spliced_ok = False
            if not spliced_ok:  # an odd span: fall back to the whole module, unparsed
                text = ast.unparse(expected) + "\n"
            mutated_lines = text.splitlines()
            line = node.lineno if spliced_ok else _first_difference(lines, mutated_lines)
            found.append(
                Mutant(
                    index=len(found),
                    operator=operator,
                    description=description,
                    line=node.lineno,
                    before=lines[node.lineno - 1].strip(),
                    after=mutated_lines[line - 1].strip() if line <= len(mutated_lines) else "",
                    source=text,
                )
            )
    return found


def _first_difference(a: list[str], b: list[str]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + 1


def compile_error(source: str, filename: str = "<mutant>") -> str | None:
    """Why the mutant does not compile (it then counts as invalid, not killed), or None."""
    try:
        compile(source, filename, "exec")
    except (SyntaxError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def sample(items: Sequence[Mutant], n: int | None, seed: int = 0) -> list[Mutant]:
    """Up to `n` of `items`, drawn with random.Random(seed), in their original order
    (all of them when n is None or not smaller than len(items))."""
    if n is None or n >= len(items):
        return list(items)
    picked = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in picked]


def find(items: Sequence[Mutant], key: str) -> Mutant:
    """The first mutant with this key (Mutant.key); LookupError if the file no longer has it."""
    for m in items:
        if m.key == key:
            return m
    raise LookupError(f"no mutant {key!r}: the file changed; pick again")


def write(mutant: Mutant, directory: Path, name: str) -> Path:
    """Write the mutant as directory/name (directory is created; never the original's folder
    unless the caller asks for it) and return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(mutant.source, encoding="utf-8")
    return path
