"""What a static read of a training script shows, for the follow-up questions: `ast` finds the
optimizer class constructed, the save call (torch.save, torch.distributed.checkpoint), whether a
rank-0 guard wraps it, a rename after it, the checkpoint's keys and the phase names of the step
lines. The source is read, never compiled to code nor run. A file that does not parse, or is too
large, yields no facts: the questions then use neutral phrases.

    facts = inspect_source(source)      # ScriptFacts
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from drill.mock.coding.check_facts import clean

MAX_SOURCE_CHARS = 1024**2  # the grader's own limit (trainer_lab.usercode.source)


@dataclass
class ScriptFacts:
    """What a static read of the script shows (nothing when it does not parse)."""

    parsed: bool = False
    optimizers: list[str] = field(default_factory=list)  # classes constructed, in source order
    momentum: bool | None = None  # SGD's momentum > 0 (None: not a constant)
    lr: str | None = None  # the --lr default or the optimizer's lr=, when a constant
    saves: list[str] = field(default_factory=list)  # torch.save, torch.distributed.checkpoint
    rank0_save: bool | None = None  # every save call under a rank-0 guard (None: no save)
    renames: bool = False  # os.replace / os.rename / Path.rename after writing
    fsync: bool = False
    wrappers: list[str] = field(default_factory=list)
    ckpt_keys: list[str] = field(default_factory=list)
    phases: list[str] = field(default_factory=list)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _aliases(nodes: list[ast.AST]) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _resolve(node: ast.AST, aliases: dict[str, str]) -> str:
    dotted = _dotted(node) or ""
    head, _, rest = dotted.partition(".")
    full = aliases.get(head, head)
    return f"{full}.{rest}" if rest else full


def _position_key(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _mentions_rank(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        name = (
            sub.id
            if isinstance(sub, ast.Name)
            else sub.attr
            if isinstance(sub, ast.Attribute)
            else ""
        )
        low = name.lower()
        if "rank" in low or low in ("is_main", "is_master", "main_process", "is_main_process"):
            return True
    return False


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _rank_test(test: ast.AST) -> str | None:
    """ "zero" for a test that holds on rank 0 only, "nonzero" for one that holds elsewhere."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _mentions_rank(test):
        return "zero"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _mentions_rank(test):
        other = test.comparators[0] if not _zero(test.left) else test.left
        if _zero(other) or _zero(test.left):
            if isinstance(test.ops[0], ast.Eq | ast.Is | ast.LtE):
                return "zero"
            if isinstance(test.ops[0], ast.NotEq | ast.IsNot | ast.Gt):
                return "nonzero"
    if isinstance(test, ast.Name | ast.Attribute | ast.Call) and _mentions_rank(test):
        name = (_dotted(test.func if isinstance(test, ast.Call) else test) or "").lower()
        if any(k in name for k in ("main", "master", "zero", "rank0", "writer")):
            return "zero"
        return "nonzero"  # `if rank:`
    return None


def _index(tree: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """Every node in source order, and each node's parent (one walk of the tree)."""
    nodes: list[ast.AST] = []
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    nodes.sort(key=_position_key)
    return nodes, parents


def _guarded(call: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Under `if rank == 0:` (or the like), or after `if rank != 0: return` in its function."""
    node = call
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.If) and node in parent.body and _rank_test(parent.test) == "zero":
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            for stmt in parent.body:
                if stmt is node:
                    break
                if (
                    isinstance(stmt, ast.If)
                    and _rank_test(stmt.test) == "nonzero"
                    and stmt.body
                    and isinstance(stmt.body[-1], ast.Return)
                ):
                    return True
            if not isinstance(parent, ast.Module):
                return False
        node = parent
    return False


def _dict_keys(node: ast.AST | None) -> list[str]:
    if not isinstance(node, ast.Dict):
        return []
    return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _assigned_dicts(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """name -> the string keys of the dict literal last assigned to it (and of `name[k] = ...`)."""
    found: dict[str, list[str]] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and isinstance(node.value, ast.Dict):
                found[target.id] = _dict_keys(node.value)
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
            ):
                keys = found.setdefault(target.value.id, [])
                if target.slice.value not in keys:
                    keys.append(target.slice.value)
    return found


def _const_text(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return f"{node.value:g}" if not isinstance(node.value, bool) else None
    return None


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


SAVE_CALLS = {
    "torch.save": "torch.save",
    "torch.distributed.checkpoint.save": "torch.distributed.checkpoint",
    "torch.distributed.checkpoint.async_save": "torch.distributed.checkpoint",
    "torch.distributed.checkpoint.save_state_dict": "torch.distributed.checkpoint",
    "safetensors.torch.save_file": "safetensors",
    "pickle.dump": "pickle",
}
WRAPPERS = {
    "DistributedDataParallel": "DistributedDataParallel",
    "fully_shard": "FSDP (fully_shard)",
    "FullyShardedDataParallel": "FSDP (FullyShardedDataParallel)",
}


def inspect_source(source: str) -> ScriptFacts:
    """Read the script's design from its syntax tree (never compiled to code, never run)."""
    facts = ScriptFacts()
    if not isinstance(source, str) or len(source) > MAX_SOURCE_CHARS:
        return facts
    try:
        tree = ast.parse(source)
        nodes, parents = _index(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return facts
    facts.parsed = True
    aliases = _aliases(nodes)
    dicts = _assigned_dicts(nodes)
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    guards = []
    for call in calls:
        full = _resolve(call.func, aliases)
        last = full.rsplit(".", 1)[-1]
        if (
            (full.startswith("torch.optim.") and "lr_scheduler" not in full)
            or last == "ZeroRedundancyOptimizer"
        ) and last[:1].isupper():
            if clean(last, 40) not in facts.optimizers:
                facts.optimizers.append(clean(last, 40))
            if last == "SGD":  # momentum defaults to 0: no state
                given = _keyword(call, "momentum")
                momentum = "0" if given is None else _const_text(given)
                facts.momentum = None if momentum is None else float(momentum) > 0
            facts.lr = facts.lr or _const_text(_keyword(call, "lr"))
        elif last == "add_argument" and call.args and _is_str(call.args[0], "--lr"):
            facts.lr = _const_text(_keyword(call, "default")) or facts.lr
        elif full in SAVE_CALLS:
            if SAVE_CALLS[full] not in facts.saves:
                facts.saves.append(SAVE_CALLS[full])
            guards.append(_guarded(call, parents))
            first = call.args[0] if call.args else _keyword(call, "state_dict")
            keys = _dict_keys(first) or (
                dicts.get(first.id, []) if isinstance(first, ast.Name) else []
            )
            if keys and not facts.ckpt_keys:
                facts.ckpt_keys = [clean(k, 30) for k in keys[:8]]
        elif full in ("os.replace", "os.rename") or (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in ("rename", "replace")
            and len(call.args) == 1
            and not call.keywords
        ):
            facts.renames = True
        elif full == "os.fsync":
            facts.fsync = True
        if last in WRAPPERS and WRAPPERS[last] not in facts.wrappers:
            facts.wrappers.append(WRAPPERS[last])
        if full in ("torch.distributed.all_reduce", "dist.all_reduce") and not facts.wrappers:
            facts.wrappers.append("a hand-written gradient all-reduce")
    facts.rank0_save = all(guards) if guards else None
    facts.phases = _phase_names(nodes, dicts)
    return facts


def _is_str(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _phase_names(nodes: list[ast.AST], dicts: dict[str, list[str]]) -> list[str]:
    """The keys of the dict a step line carries under "phases"."""
    for node in (n for n in nodes if isinstance(n, ast.Dict)):
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None and _is_str(key, "phases"):
                names = _dict_keys(value) or (
                    dicts.get(value.id, []) if isinstance(value, ast.Name) else []
                )
                if names:
                    return [clean(n, 40) for n in names[:12]]
    return [clean(n, 40) for n in dicts.get("phases", [])[:12]]
