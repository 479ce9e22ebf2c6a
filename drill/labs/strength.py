"""`drill verify --strength`: does a card's claim notice when its lab is broken on purpose?

For each lab-linked card, its lab is rerun under each of the lab's sabotage/debug settings (every
non-default choice of a param named `sabotage`, and each value another param's help documents as
"debug VALUE"). A sabotage breaks a card when one of its claims (expect or predict) fails on the
sabotaged run's observations; a card no sabotage breaks "tests nothing".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from trainer_lab.catalogue_types import LabSpec, ParamError

# "debug sum: ...", "debug 0: ...", "debug: false makes ..." (the value right after "debug").
_DEBUG_VALUE = re.compile(r"\bdebug:?\s+([A-Za-z0-9_.+-]+)")


def sabotage_settings(spec: LabSpec) -> list[tuple[str, Any]]:
    """(param, value) pairs that break the lab on purpose, in SPEC order."""
    settings: list[tuple[str, Any]] = []
    for param in spec.params:
        if param.name == "sabotage":
            values = [c for c in param.choices if c != param.default]
        else:
            values = []
            for text in _DEBUG_VALUE.findall(param.help):
                try:
                    value = param.parse(text)
                except ParamError:
                    continue  # "debug: the process-group timeout ..." names no value
                if value != param.default and value not in values:
                    values.append(value)
        settings.extend((param.name, value) for value in values)
    return settings


def sabotaged_jobs(linked: LinkedCard) -> list[tuple[str, Any, LabJob]]:
    """The card's job under each sabotage setting its own params do not already fix."""
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
        jobs.append((name, value, LabJob(lab.run, params, lab.world_size)))
    return jobs


@dataclass
class CardStrength:
    card_id: str
    lab: str
    # "name=value" -> claims it broke (empty: every claim still held); None: the run gave no
    # observations (error/timeout), so it says nothing about the claims
    broken_by: dict[str, list[str] | None] = field(default_factory=dict)

    @property
    def breakers(self) -> list[str]:
        return [setting for setting, claims in self.broken_by.items() if claims]

    @property
    def tests_nothing(self) -> bool:
        return bool(self.broken_by) and not self.breakers


@dataclass
class StrengthReport:
    cards: list[CardStrength]
    jobs: list[JobOutcome]

    @property
    def weak(self) -> list[CardStrength]:
        return [card for card in self.cards if card.tests_nothing]

    @property
    def no_sabotage(self) -> list[CardStrength]:
        return [card for card in self.cards if not card.broken_by]


def broken_claims(linked: LinkedCard, outcome: JobOutcome) -> list[str] | None:
    result = outcome.result
    if result["status"] not in ("ok", "failed"):
        return None  # sabotage checks may fail the lab; the claims still read the observations
    return [row.claim for row in claim_rows(linked, result["observations"]) if not row.passed]


def run_strength(
    cards: list[LinkedCard],
    run_job: RunLab,
    cache: ResultCache,
    runs_dir: Path,
    **scheduling: Any,  # run_jobs' keywords: fresh, budget, cores_of, cancel, on_*
) -> StrengthReport:
    """Run each distinct sabotaged job once (cached like verify) and judge every card."""
    per_card = [(linked, sabotaged_jobs(linked)) for linked in cards]
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
        card = CardStrength(linked.card.id, linked.card.lab.run)
        for name, value, job in variants:
            card.broken_by[f"{name}={value}"] = broken_claims(linked, outcomes[job])
        report.cards.append(card)
    return report
