"""`drill verify --strength`: does a card's claim notice when its lab is broken on purpose?

For each lab-linked card, its lab is rerun under each of the lab's sabotage/debug settings (every
non-default choice of a param named `sabotage`, and each value another param's help documents as
"debug VALUE"). A sabotage breaks a card when one of its claims (expect or predict) fails on the
sabotaged run's observations; a card no sabotage breaks "tests nothing".

Before any run, each claim is read on its own (`echo_claims`): a claim that only restates an
input (`resume_step == 8` with the param at 8), compares an observation the lab computes from
its params or set-up (declared `derived` in its SPEC: a formula, a dtype limit, a size), or pins
a quantity to its trivial range (`mfu > 0 and mfu <= 1`) tests nothing whatever the run does.
So does a claim that holds at one world size only (`world_size_problems`): a card that pins no
world size must hold at W=2 and W=3.

A card whose `where:` does not hold on a sabotaged run (a GPU-only lab run on a CPU) is
skipped on this device: its claims were never held against the run, so it neither passes nor
"tests nothing" here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from drill.claims.grammar import Comparison, out_of_scope, parse_claim
from drill.decks.models import Card
from drill.labs.debug_params import sabotage_settings
from drill.labs.verify import (
    JobOutcome,
    LabJob,
    LinkedCard,
    ResultCache,
    RunLab,
    claim_rows,
    run_jobs,
)
from trainer_lab.catalogue import get_lab
from trainer_lab.catalogue_types import LabSpec


def sabotaged_jobs(
    linked: LinkedCard, world_size: int | None = None
) -> list[tuple[str, Any, LabJob]]:
    """The card's job under each sabotage setting its own params do not already fix (at
    `world_size` where the card pins none and it is given)."""
    lab = linked.card.lab
    assert lab is not None
    try:
        spec = get_lab(lab.run)
    except KeyError:
        return []
    jobs = []
    for name, value in sabotage_settings(spec):
        if name in lab.params:
            continue
        params = tuple(sorted({**lab.params, name: value}.items()))
        world = lab.world_size if lab.world_size is not None else world_size
        jobs.append((name, value, LabJob(lab.run, params, world)))
    return jobs


# Quantities positive in every run that completes: `> 0` on them tests nothing.
POSITIVE_BY_CONSTRUCTION = frozenset(
    {"tokens_per_s", "peak_flops", "achieved_flops", "step_s", "params"}
)


def _derived(spec: LabSpec, name: str) -> bool:
    """`name` matches an observation the SPEC declares derived (`*` is one segment)."""
    parts = name.split(".")
    for obs in spec.observations:
        declared = obs.name.split(".")
        if (
            obs.derived
            and len(declared) == len(parts)
            and all(fnmatchcase(a, b) for a, b in zip(parts, declared, strict=True))
        ):
            return True
    return False


def _trivial_range(comparisons: tuple[Comparison, ...]) -> bool:
    """`x > 0 and x <= 1` (the range of any share or MFU), or `tokens_per_s > 0`."""
    lower = {c.name for c in comparisons if c.op in (">", ">=") and c.value == 0}
    upper = {c.name for c in comparisons if c.op in ("<", "<=") and c.value == 1}
    positive = {name for name in lower if name.rsplit(".", 1)[-1] in POSITIVE_BY_CONSTRUCTION}
    return bool(lower & upper) or bool(positive)


def echo_claims(card: Card) -> list[str]:
    """ "claim: why" for each expect claim or predict condition of `card` that can hold or
    fail only by restating its inputs, read without running anything."""
    lab = card.lab
    if lab is None:
        return []
    try:
        spec: LabSpec | None = get_lab(lab.run)
    except KeyError:
        spec = None
    params = {p.name: p.default for p in spec.params} if spec else {}
    params.update(lab.params)
    texts = list(lab.expect)
    if card.predict is not None:
        texts += [choice.when for choice in card.predict.choices]
    found = []
    for text in dict.fromkeys(texts):
        comparisons = parse_claim(text).comparisons
        for c in comparisons:
            param = c.name.rsplit(".", 1)[-1]
            if c.op == "==" and param in params and params[param] == c.value:
                found.append(f"{text}: restates the param {param}={params[param]}")
                break
            if spec is not None and _derived(spec, c.name):
                found.append(f"{text}: {c.name} is computed from the lab's inputs, not observed")
                break
        else:
            if _trivial_range(comparisons):
                found.append(f"{text}: only states the quantity's trivial range")
    return found


WORLD_SIZES = (2, 3)  # a card that pins no world size must hold at each


def _rank_index(spec: LabSpec, name: str) -> str | None:
    """The rank number a dotted name reaches into (`ranks.1.forward_ms`), when its declared
    observation is per rank; None otherwise."""
    parts = name.split(".")
    for obs in spec.observations:
        declared = obs.name.split(".")
        if len(declared) != len(parts) or "rank" not in obs.help:
            continue
        if all(fnmatchcase(a, b) for a, b in zip(parts, declared, strict=True)):
            for part, pattern in zip(parts, declared, strict=True):
                if pattern == "*" and part.isdigit():
                    return part
    return None


def world_size_problems(card: Card) -> list[str]:
    """Why `card`'s claims may hold at one world size only, read without running anything:
    it pins no world size and its lab cannot run at each of WORLD_SIZES, or a claim names a
    rank by number (`root_cause.rank == 1`, `ranks.1.forward_ms`): which rank is the victim,
    the straggler or the last one depends on W. Rank 0 exists at every size, but a claim that
    some `*rank` observation equals 0 still names a rank."""
    lab = card.lab
    if lab is None or lab.world_size is not None:
        return []
    try:
        spec = get_lab(lab.run)
    except KeyError:
        return []
    found = [
        f"pins no world_size, but lab {spec.name} runs only at "
        f"{spec.min_world_size}..{spec.max_world_size} ranks (not {w})"
        for w in WORLD_SIZES
        if not spec.min_world_size <= w <= spec.max_world_size
    ]
    texts = list(lab.expect)
    if card.predict is not None:
        texts += [choice.when for choice in card.predict.choices]
    for text in dict.fromkeys(texts):
        for c in parse_claim(text).comparisons:
            leaf = c.name.rsplit(".", 1)[-1]
            numeric = isinstance(c.value, int | float) and not isinstance(c.value, bool)
            if (leaf == "rank" or leaf.endswith("_rank")) and numeric:
                found.append(f"{text}: {c.name} {c.op} {c.value} names a rank by number")
                break
            index = _rank_index(spec, c.name)
            if index is not None and index != "0":
                found.append(f"{text}: {c.name} reaches into rank {index} by number")
                break
    return found


@dataclass
class CardStrength:
    card_id: str
    lab: str
    # "name=value" -> claims it broke (empty: every claim still held); None: the run gave no
    # observations (error/timeout), so it says nothing about the claims
    broken_by: dict[str, list[str] | None] = field(default_factory=dict)
    echoes: list[str] = field(default_factory=list)  # echo_claims: hold whatever the run
    # "name=value" -> why the card's `where:` does not hold on that run ("not where ...")
    skipped: dict[str, str] = field(default_factory=dict)
    world_claims: list[str] = field(default_factory=list)  # world_size_problems

    @property
    def breakers(self) -> list[str]:
        return [setting for setting, claims in self.broken_by.items() if claims]

    @property
    def skipped_for_device(self) -> bool:
        """No run held the claims: each one with observations was outside the card's `where:`."""
        return bool(self.skipped) and not self.breakers

    @property
    def tests_nothing(self) -> bool:
        return bool(self.broken_by) and not self.breakers and not self.skipped_for_device


@dataclass
class StrengthReport:
    cards: list[CardStrength]
    jobs: list[JobOutcome]

    @property
    def weak(self) -> list[CardStrength]:
        return [card for card in self.cards if card.tests_nothing]

    @property
    def echoing(self) -> list[CardStrength]:
        return [card for card in self.cards if card.echoes]

    @property
    def world_specific(self) -> list[CardStrength]:
        return [card for card in self.cards if card.world_claims]

    @property
    def device_skipped(self) -> list[CardStrength]:
        return [card for card in self.cards if card.skipped_for_device]


def broken_claims(linked: LinkedCard, outcome: JobOutcome) -> list[str] | None:
    result = outcome.result
    if result["status"] not in ("ok", "failed"):
        return None  # sabotage checks may fail the lab; the claims still read the observations
    return [row.claim for row in claim_rows(linked, result["observations"]) if not row.passed]


def scope_skip(linked: LinkedCard, outcome: JobOutcome) -> str | None:
    """Why the card's `where:` does not hold on this run (None: it holds, or no observations)."""
    assert linked.card.lab is not None
    result = outcome.result
    if result["status"] not in ("ok", "failed"):
        return None
    return out_of_scope(linked.card.lab.where, result["observations"])


def run_strength(
    cards: list[LinkedCard],
    run_job: RunLab,
    cache: ResultCache,
    runs_dir: Path,
    world_size: int | None = None,
    **scheduling: Any,  # run_jobs' keywords: fresh, budget, cores_of, cancel, on_*
) -> StrengthReport:
    """Run each distinct sabotaged job once (cached like verify) and judge every card."""
    per_card = [(linked, sabotaged_jobs(linked, world_size)) for linked in cards]
    jobs = list(dict.fromkeys(job for _, variants in per_card for *_, job in variants))
    outcomes = run_jobs(
        jobs,
        run_job,
        cache,
        runs_dir,
        **scheduling,
    )
    report = StrengthReport([], [outcomes[job] for job in jobs])
    for linked, variants in per_card:
        assert linked.card.lab is not None
        card = CardStrength(
            linked.card.id,
            linked.card.lab.run,
            echoes=echo_claims(linked.card),
            world_claims=world_size_problems(linked.card),
        )
        for name, value, job in variants:
            setting = f"{name}={value}"
            skip = scope_skip(linked, outcomes[job])
            if skip is not None:
                card.skipped[setting] = skip
            else:
                card.broken_by[setting] = broken_claims(linked, outcomes[job])
        report.cards.append(card)
    return report
