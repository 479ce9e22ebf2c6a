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

The run's facts come from the checks' facts, never their details (drill.mock.coding.check_facts);
the script's from a read of its syntax tree, never a run (drill.mock.coding.script_facts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drill.mock.coding.check_facts import (
    CheckSeen,
    clean,
    logged_phases,
    read_checks,
    run_facts,
)
from drill.mock.coding.followup_probes import FAILED as FAILED_QUESTION
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
from drill.mock.coding.script_facts import ScriptFacts, inspect_source
from trainer_lab.grading import PHASES

if TYPE_CHECKING:
    from drill.mock.coding.catalogue import RoundPrompt

MIN_QUESTIONS = 3
MAX_QUESTIONS = 5
MAX_RUBRIC = 5
FAILED_KIND, WHAT_IF_KIND, FROM_CODE_KIND = FAILED_QUESTION, "what-if", "from-code"


@dataclass(frozen=True)
class FollowUp:
    id: str
    kind: str  # failed | what-if (its phase held) | from-code (its phase gave no evidence)
    question: str
    rubric: tuple[str, ...]  # what a good answer states (3-5 items)
    cards: tuple[str, ...]  # review card ids (decks/*.yaml)
    source_check: str  # the check that led to it
    evidence: str = ""  # what that check saw, as quoted (empty for a question from the code)

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
    families = dict.fromkeys([*PHASES, *(c.family for c in checks)])  # another prompt's too
    return {family: {**base, **by.get(family, {})} for family in families}


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
    seen: CheckSeen | str | None = None,
    also: list[str] | None = None,
) -> FollowUp:
    """`seen`: the check the question quotes, or the text it quotes (None: from the code)."""
    evidence = seen if isinstance(seen, str) else seen.evidence if seen is not None else ""
    filled = {**facts, "evidence": evidence}
    text = _fill(template.text, filled)
    if kind == WHAT_IF_KIND and template.lead:
        text = _fill(template.lead, filled) + " " + text
    if also:
        text += f" (Also failed in this phase: {', '.join(also)}.)"
    rubric = [_fill(item, filled) for item in template.rubric]
    cause = seen.likely_cause if kind == FAILED_KIND and isinstance(seen, CheckSeen) else ""
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


def _failed_template(check: CheckSeen, failed: Mapping[str, Template] = FAILED) -> Template:
    """The check's own question (in the prompt's table `failed`); the hang question when its
    run hung; for a check the table does not know (a newer grader), its phase's first
    question, else the table's first."""
    if check.hang:
        return HANG._replace(id=f"{HANG.id}-{check.family}")
    if check.name in failed:
        return failed[check.name]
    same_phase = (t for name, t in failed.items() if name.startswith(f"{check.family}."))
    return next(same_phase, next(iter(failed.values())))


def follow_ups(
    result: Mapping[str, Any], source: str, prompt: RoundPrompt | None = None
) -> list[FollowUp]:
    """3-5 questions for a grading (the lab result's mapping) of `source`: failed phases first
    (grader phase order), then what-ifs of the phases that held (WHAT_IF_ORDER), then, when
    fewer than three, what-ifs from the code alone. Deterministic; never runs the source.
    `prompt`: the round's prompt (drill.mock.coding.catalogue), whose grader phases and
    follow-up table are asked from (default: today's DDP round's)."""
    phases = prompt.phases if prompt is not None else PHASES
    failed_table = prompt.followups.failed if prompt is not None else FAILED
    what_if = prompt.followups.what_if if prompt is not None else WHAT_IF
    what_if_order = prompt.followups.what_if_order if prompt is not None else WHAT_IF_ORDER
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
            _question(GATE_NOT_COMPILED, FAILED_KIND, first, base, clean(f"not run: {syntax}"))
        )
    gate_asked = False
    for family in phases:
        failed = [c for c in graded if c.family == family and not c.passed]
        if not failed:
            continue
        lead = failed[0]
        asked.add(family)
        if lead.no_optimizer_step:
            if not gate_asked:
                gate_asked = True
                questions.append(
                    _question(GATE_NO_OPTIMIZER_STEP, FAILED_KIND, lead.name, base, lead.evidence)
                )
            continue
        also = [c.name for c in failed[1:]]
        questions.append(
            _question(
                _failed_template(lead, failed_table),
                FAILED_KIND,
                lead.name,
                facts(family),
                lead,
                also,
            )
        )
    held = {
        family
        for family in phases
        if family not in asked
        and any(c.family == family for c in graded)
        and all(c.passed for c in graded if c.family == family)
    }
    for family in what_if_order:
        if family in held and len(questions) < MAX_QUESTIONS:
            template = what_if[family]
            seen = next((c for c in graded if c.name == template.check), None)
            questions.append(_question(template, WHAT_IF_KIND, template.check, facts(family), seen))
            asked.add(family)
    # fewer than three: ask from the code, phases that gave no evidence first
    for family in sorted(
        (f for f in what_if_order if f not in held),
        key=lambda f: (f in asked, what_if_order.index(f)),
    ):
        if len(questions) >= MIN_QUESTIONS:
            break
        template = what_if[family]
        questions.append(_question(template, FROM_CODE_KIND, template.check, facts(family)))
    return questions[:MAX_QUESTIONS]


def iter_card_ids() -> Iterator[str]:
    """Every card id the table and the probes (followup_probes) link to (each once)."""
    from drill.mock.coding.followup_probes import PROBES

    seen: dict[str, None] = {}
    for template in (*FAILED.values(), GATE_NOT_COMPILED, GATE_NO_OPTIMIZER_STEP, HANG,
                     *WHAT_IF.values(), *PROBES):  # fmt: skip
        seen.update(dict.fromkeys(template.cards))
    return iter(seen)
