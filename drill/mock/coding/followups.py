"""Follow-up questions for a graded train.py: asked from the evidence of the candidate's own runs
and code, not from a generic pool (the coding round's pushback, `drill mock followups FILE`).

    questions = follow_ups(dict(grading), source)    # 3-5 FollowUp, failed ones first
    [q.to_dict() for q in questions]                 # what --json prints

A grader phase with a failed check asks about the first one, quoting its evidence and the facts
of that run (which rank was killed after which step, where the relaunch started, which ids it
fetched); a phase whose checks all held asks a harder what-if about the script's own design
(its optimizer class, how and by whom it saves, the phase names it logs). When fewer than three
phases gave evidence (a partial grading), what-ifs asked from the code alone fill up to three.
The templates, rubrics and card ids are one table: drill.mock.coding.followup_table.

The source is read, never run: `ast` finds the optimizer class constructed, the save call
(torch.save, torch.distributed.checkpoint), whether a rank-0 guard wraps it, a rename after it,
the checkpoint's keys and the phase names of the step lines. A file that does not parse, or is
too large, yields no code facts: the questions then use neutral phrases.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from drill.mock.coding.followup_table import (
    FAILED,
    GATE_NO_OPTIMIZER_STEP,
    GATE_NOT_COMPILED,
    HANG,
    OPTIMIZER_STATE,
    WHAT_IF,
    WHAT_IF_ORDER,
    Template,
)
from trainer_lab.grading import (
    BATCH_SIZE,
    CKPT_EVERY,
    DATASET_SIZE,
    PHASES,
    RESTART_KILLED_AFTER,
    TEAR_AFTER,
)

MIN_QUESTIONS = 3
MAX_QUESTIONS = 5
MAX_RUBRIC = 5
MAX_SOURCE_CHARS = 1024**2  # the grader's own limit (trainer_lab.usercode.source)
MAX_QUOTE = 260  # characters of a check's evidence quoted in a question
MAX_DETAIL = 20_000  # characters of a check's detail read (the grader's are far shorter)
FAILED_KIND, WHAT_IF_KIND, FROM_CODE_KIND = "failed", "what-if", "from-code"
NO_STEP = "no optimizer step seen"


@dataclass(frozen=True)
class FollowUp:
    id: str
    kind: str  # failed | what-if (its phase held) | from-code (its phase gave no evidence)
    question: str
    rubric: tuple[str, ...]  # what a good answer states (3-5 items)
    cards: tuple[str, ...]  # review card ids (decks/*.yaml)
    source_check: str  # the check that led to it
    evidence: str = ""  # that check's detail as quoted (empty for a question from the code)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "rubric": list(self.rubric),
            "cards": list(self.cards),
            "source_check": self.source_check,
            "evidence": self.evidence,
        }


# -- text ------------------------------------------------------------------------------------


def clean(text: object, limit: int = MAX_QUOTE) -> str:
    """One line of shown text: control characters replaced by a visible placeholder, runs of
    white space collapsed, cut at `limit` characters (at a word, with an ellipsis)."""
    raw = " ".join(str(text).split())
    shown = "".join("\ufffd" if unicodedata.category(ch) == "Cc" else ch for ch in raw)
    if len(shown) <= limit:
        return shown
    cut = shown[:limit].rsplit(" ", 1)[0] or shown[:limit]
    return cut.rstrip(",;: ") + " ..."


def _segments(detail: str) -> list[str]:
    """A detail per world size (`W=2: ...; W=3: ...`) or per torn file (`... | ...`)."""
    if " | " in detail:
        return detail.split(" | ")
    if detail.startswith("W="):
        return [s for s in re.split(r"; (?=W=\d+: )", detail) if s]
    return [detail]


_FAILING = ("expected", "likely cause", "hang:", "error", "deadline", "timeout", "not run")


def failing_part(detail: str) -> str:
    """The part of a failed check's detail that tells why (a W=3 failure after a W=2 pass)."""
    parts = _segments(detail)
    return next((p for p in parts if any(m in p for m in _FAILING)), parts[0])


def quote(detail: str) -> str:
    """The evidence as quoted: what the grader saw, without its likely cause (nor, for a hang,
    the grader's general explanation of one)."""
    part = failing_part(detail).split("; likely cause: ")[0]
    if "hang:" in part:
        part = part.split("; expected an optimizer step")[0]
    return clean(part)


def likely_cause(detail: str) -> str:
    part = failing_part(detail)
    if "; likely cause: " not in part:
        return ""
    return clean(part.split("; likely cause: ", 1)[1].split("; W=")[0], 320)


# -- the grading -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckSeen:
    name: str
    passed: bool
    detail: str

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def graded(self) -> bool:
        """False for a check that was not run (its phase skipped, the file not compiled)."""
        return not self.detail.startswith("not run:")


def read_checks(result: Mapping[str, Any]) -> list[CheckSeen]:
    """The result's checks, skipping anything not shaped like one."""
    checks = result.get("checks") if isinstance(result, Mapping) else None
    found = []
    for c in checks if isinstance(checks, list) else []:
        if (
            isinstance(c, Mapping)
            and isinstance(c.get("name"), str)
            and isinstance(c.get("passed"), bool)
        ):
            detail = str(c.get("detail", ""))[:MAX_DETAIL]
            found.append(CheckSeen(c["name"][:100], c["passed"], detail))
    return found


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def _num(pattern: str, text: str, default: int) -> str:
    found = _int(pattern, text)
    return str(default if found is None else found)


def _resume_phrase(detail: str) -> str | None:
    """How a relaunch started, as the verb phrase `your run ...` continues with."""
    if "match no step of the uninterrupted run" in detail:
        return "started from weights that match no step of the uninterrupted run"
    if "made no optimizer step" in detail:
        return "made no optimizer step at all"
    resumed = _int(r"resumed from the weights after step (\d+)", detail)
    if resumed is None:
        return None
    text = (
        "started again from the initial weights (step 0)"
        if resumed == 0
        else f"started again from the weights after step {resumed}"
    )
    printed = _int(r"first step line (\d+)", detail)
    if printed is not None:
        text += f" and printed step {printed} first"
    return text


def _position(step: int, world: int) -> str:
    per_epoch = max(1, DATASET_SIZE // world // BATCH_SIZE)
    epoch, done = divmod(step, per_epoch)
    return f"the start of epoch {epoch}" if done == 0 else f"{done} steps into epoch {epoch}"


def run_facts(checks: list[CheckSeen]) -> dict[str, dict[str, str]]:
    """The facts the details show (numbers as text): "" the whole run's, a grader phase's own
    where they differ."""
    by_name = {c.name: c.detail for c in checks}
    expected = (RESTART_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    restart = by_name.get("restart.resumes_at_checkpoint", "")
    resumed = _int(r"resumed from the weights after step (\d+)", restart)
    resumed = resumed if resumed is not None else expected
    writes = re.search(r"checkpoint writes seen: ([^;|]+)", restart)
    replay = re.search(
        r"rank (\d+), step (\d+) \(resumed after \d+\): fetched (\[[^\]]*\]), the "
        r"uninterrupted run (\[[^\]]*\]): ([^;]*)",
        by_name.get("restart.no_replay_or_skip", ""),
    )
    diff = _int(r"first at step (\d+)", by_name.get("restart.matches_uninterrupted", ""))
    steps_w2 = DATASET_SIZE // 2 // BATCH_SIZE
    common = {
        "killed_rank": _num(r"rank (\d+) SIGKILLed", restart, 1),
        "killed_after": _num(r"SIGKILLed after step (\d+)", restart, RESTART_KILLED_AFTER),
        "expected_step": _num(r"\(expected (\d+)\)", restart, expected),
        "resumed_step": str(resumed),
        "next_step": str(resumed + 1),
        "w2_position": _position(resumed, 2),
        "w3_position": _position(resumed, 3),
        "steps_per_epoch_w2": str(steps_w2),
        "steps_per_epoch_w3": str(DATASET_SIZE // 3 // BATCH_SIZE),
        "batch": str(BATCH_SIZE),
        "global_batch_w2": str(BATCH_SIZE * 2),
        "global_batch_w3": str(BATCH_SIZE * 3),
        "global_batch_64": str(BATCH_SIZE * 64),
        "ckpt_writes": clean(writes.group(1), 160) if writes else "its checkpoint files",
        "replay_rank": replay.group(1) if replay else "1",
        "replay_step": replay.group(2) if replay else str(resumed + 1),
        "replay_fetched": clean(replay.group(3), 60) if replay else "other samples",
        "replay_expected": clean(replay.group(4), 60) if replay else "other ones",
        "replay_what": clean(replay.group(5), 80) if replay else "a different batch",
        "diff_step": str(diff) if diff is not None else "after the resume",
        "resume_phrase": _resume_phrase(restart) or "started again",
    }
    torn = failing_part(by_name.get("torn.previous_checkpoint_used", "") or "-")
    tear = re.search(
        r"killed while writing (.+?) \(file \d+ written after step \d+, (.+?) bytes", torn
    )
    loss = re.search(r"loss (\S+) -> (\S+)", by_name.get("skeleton.loss_falls", ""))
    made = _int(r"after (\d+) optimizer steps", by_name.get("skeleton.exits", ""))
    common.update(
        {
            "torn_file": clean(tear.group(1), 80) if tear else f"the save after step {TEAR_AFTER}",
            "torn_bytes": clean(tear.group(2), 40) if tear else "part of its",
            "loss_first": loss.group(1) if loss else "its first value",
            "loss_last": loss.group(2).rstrip(",;") if loss else "its last",
            "single_steps": str(made) if made is not None else "its",
        }
    )
    # the torn phase's relaunch is another run than the restart phase's
    return {"": common, "torn": {"resume_phrase": _resume_phrase(torn) or "started again"}}


def logged_phases(checks: list[CheckSeen]) -> list[str]:
    """The phase names of the step lines, as the monitoring check saw them."""
    detail = next((c.detail for c in checks if c.name == "monitoring.named_phases"), "")
    m = re.search(r"phases on all \d+ step lines: (.*)$", detail)
    if m:
        return [clean(n, 40) for n in m.group(1).split(", ") if n][:12]
    m = re.search(r"phases is \{(.*)", detail)
    return [clean(n, 40) for n in re.findall(r"'([^'\\]{1,40})':", m.group(1))][:12] if m else []


# -- the source ------------------------------------------------------------------------------


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


# -- the questions ---------------------------------------------------------------------------


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _pick(names: list[str], words: tuple[str, ...]) -> str | None:
    """The first name holding the first word that any name holds (words in priority order)."""
    return next((n for w in words for n in names if w in n.lower()), None)


def design_facts(script: ScriptFacts, checks: list[CheckSeen]) -> dict[str, str]:
    """The script's design as phrases for the templates (neutral ones where it is unknown)."""
    optimizer = script.optimizers[0] if script.optimizers else None
    state, state_bytes = OPTIMIZER_STATE.get(optimizer or "", ("its state per parameter", 8))
    if optimizer == "SGD" and script.momentum is False:
        state, state_bytes = "nothing (plain SGD keeps no state without momentum)", 0
    per_param = 4 + state_bytes
    single = next((c for c in checks if c.name == "restart.single_writer" and c.graded), None)
    if "torch.distributed.checkpoint" in script.saves:
        save = "saved with torch.distributed.checkpoint, every rank writing its part"
    else:
        who = (
            "by rank 0 alone"
            if script.rank0_save
            else "by every rank"
            if single is not None and not single.passed
            else "by one rank per file"
            if single is not None
            else ""
        )
        how = f"with {script.saves[0]}" if script.saves else ""
        save = " ".join(p for p in ("written", who, how) if p)
        if not script.saves:
            save += " by code this reading did not find (no torch.save or dcp.save call)"
        elif script.renames:
            save += " to a temp file, then renamed into place"
    observed = logged_phases(checks)
    phases = script.phases if set(script.phases) == set(observed) or not observed else observed
    keys = script.ckpt_keys
    position = _pick(keys, ("sampler", "offset", "position", "cursor", "index", "epoch"))
    step_key = _pick(keys, ("step", "iter"))
    fsdp = any("FSDP" in w for w in script.wrappers)
    sync = _pick(phases, ("backward", "reduce", "sync", "comm", "grad", "bwd"))
    data = _pick(phases, ("data", "load", "fetch", "input", "batch"))
    compute = _pick(phases, ("forward", "compute", "fwd", "model"))
    return {
        "optimizer": optimizer or "your optimizer",
        "optimizer_state": state,
        "state_bytes": str(state_bytes),
        "bytes_per_param": str(per_param),
        "size_70b": f"{70 * per_param:,} GB",
        "write_minutes": str(max(1, round(70 * per_param / 2 / 60))),
        "lr": f"lr {script.lr}" if script.lr else "its learning rate",
        "save_phrase": save,
        "ckpt_keys": _and(keys) if keys else "the state you pass to it",
        "position_source": (
            f"its {position!r} entry"
            if position
            else f"the saved {step_key!r} (no sampler state of its own)"
            if step_key
            else "wherever your script restores it"
        ),
        "wrapper": _and(script.wrappers) if script.wrappers else "your data-parallel setup",
        "fsdp_lead": (
            "Your model is already sharded; now it grows tenfold."
            if fsdp
            else "The model grows past one GPU's memory and you move to FSDP (fully_shard)."
        ),
        "phase_list": ", ".join(phases) if phases else "the phases you log",
        "phase_count": str(len(phases)) if phases else "no",
        "sync_phase": f"your {sync!r} phase" if sync else "the phase that spans loss.backward()",
        "data_phase": f"{data!r} phase" if data else "data loading",
        "compute_phase": repr(compute) if compute else "forward and backward",
    }


def template_facts(checks: list[CheckSeen], script: ScriptFacts) -> dict[str, dict[str, str]]:
    """Per grader phase, every fact its questions can use: the whole run's, the script's and the
    phase's own (the torn phase's relaunch is not the restart phase's)."""
    by = run_facts(checks)
    base = {**by[""], **design_facts(script, checks)}
    return {family: {**base, **by.get(family, {})} for family in PHASES}


class _Facts(dict):  # str.format_map: a placeholder no fact fills reads as "?"
    def __missing__(self, key: str) -> str:
        return "?"


def _fill(text: str, facts: Mapping[str, str]) -> str:
    return text.format_map(_Facts(facts))


def _question(
    template: Template,
    kind: str,
    check: str,
    facts: Mapping[str, str],
    detail: str = "",
    also: list[str] | None = None,
) -> FollowUp:
    evidence = quote(detail) if detail else ""
    filled = {**facts, "evidence": evidence}
    text = _fill(template.text, filled)
    if kind == WHAT_IF_KIND and template.lead:
        text = _fill(template.lead, filled) + " " + text
    if also:
        text += f" (Also failed in this phase: {', '.join(also)}.)"
    rubric = [_fill(item, filled) for item in template.rubric]
    cause = likely_cause(detail) if kind == FAILED_KIND else ""
    if cause:
        rubric.insert(0, f"Names the cause the run points to: {cause}")
    return FollowUp(
        id=template.id,
        kind=kind,
        question=text,
        rubric=tuple(rubric[:MAX_RUBRIC]),
        cards=template.cards,
        source_check=check,
        evidence=evidence,
    )


def _failed_template(check: CheckSeen) -> Template:
    """The check's own question; the hang question when its run hung; for a check the table
    does not know (a newer grader), its phase's first question."""
    part = failing_part(check.detail)
    if "hang:" in part or "deadline: killed" in part:
        return HANG._replace(id=f"{HANG.id}-{check.family}")
    if check.name in FAILED:
        return FAILED[check.name]
    return next(t for name, t in FAILED.items() if name.startswith(f"{check.family}."))


def follow_ups(result: Mapping[str, Any], source: str) -> list[FollowUp]:
    """3-5 questions for a grading (the lab result's mapping) of `source`: failed phases first
    (grader phase order), then what-ifs of the phases that held (WHAT_IF_ORDER), then, when
    fewer than three, what-ifs from the code alone. Deterministic; never runs the source."""
    checks = read_checks(result)
    by_family = template_facts(checks, inspect_source(source))
    base = by_family[PHASES[0]]

    def facts(family: str) -> dict[str, str]:
        return by_family.get(family, base)

    observations = result.get("observations") if isinstance(result, Mapping) else None
    syntax = observations.get("syntax_error") if isinstance(observations, Mapping) else None
    graded = [c for c in checks if c.graded]
    questions: list[FollowUp] = []
    asked: set[str] = set()  # grader phases with a question
    if isinstance(syntax, str) and syntax:
        first = checks[0].name if checks else "skeleton.exits"
        questions.append(
            _question(GATE_NOT_COMPILED, FAILED_KIND, first, base, f"not run: {syntax}")
        )
    gate_asked = False
    for family in PHASES:
        failed = [c for c in graded if c.family == family and not c.passed]
        if not failed:
            continue
        lead = failed[0]
        asked.add(family)
        if NO_STEP in lead.detail:
            if not gate_asked:
                gate_asked = True
                gate = lead.detail.split("; observed: ")[0]
                questions.append(
                    _question(GATE_NO_OPTIMIZER_STEP, FAILED_KIND, lead.name, base, gate)
                )
            continue
        also = [c.name for c in failed[1:]]
        questions.append(
            _question(
                _failed_template(lead), FAILED_KIND, lead.name, facts(family), lead.detail, also
            )
        )
    held = {
        family
        for family in PHASES
        if family not in asked
        and any(c.family == family for c in graded)
        and all(c.passed for c in graded if c.family == family)
    }
    for family in WHAT_IF_ORDER:
        if family in held and len(questions) < MAX_QUESTIONS:
            template = WHAT_IF[family]
            detail = next((c.detail for c in graded if c.name == template.check), "")
            questions.append(
                _question(template, WHAT_IF_KIND, template.check, facts(family), detail)
            )
            asked.add(family)
    # fewer than three: ask from the code, phases that gave no evidence first
    for family in sorted(
        (f for f in WHAT_IF_ORDER if f not in held),
        key=lambda f: (f in asked, WHAT_IF_ORDER.index(f)),
    ):
        if len(questions) >= MIN_QUESTIONS:
            break
        template = WHAT_IF[family]
        questions.append(_question(template, FROM_CODE_KIND, template.check, facts(family)))
    return questions[:MAX_QUESTIONS]


def iter_card_ids() -> Iterator[str]:
    """Every card id the table links to (each once)."""
    seen: dict[str, None] = {}
    for template in (*FAILED.values(), GATE_NOT_COMPILED, GATE_NO_OPTIMIZER_STEP, HANG,
                     *WHAT_IF.values()):  # fmt: skip
        seen.update(dict.fromkeys(template.cards))
    return iter(seen)
