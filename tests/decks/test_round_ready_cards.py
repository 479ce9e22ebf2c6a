"""Every bundled card can be used by a mock round: it has a rubric to grade it by, and the
standard round's phases can draw the interview topics the seeds place in them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.decks.models import Deck
from drill.mock.loader import find_round
from drill.mock.selection import CardEntry, plan_round


def _load(path: Path) -> Deck:
    with path.open(encoding="utf-8") as handle:
        return Deck.model_validate(yaml.safe_load(handle))


ENTRIES = [
    CardEntry(deck.deck, card)
    for deck in (_load(path) for path in bundled_deck_paths())
    for card in deck.cards
]
STANDARD = find_round("standard")
PHASE_INDEX = {phase.id: index for index, phase in enumerate(STANDARD.phases)}
# Topics (deck tags) the seeds' time table puts in a phase of the standard round.
TOPIC_PHASES = {
    "rendezvous": "distributed",
    "evaluation": "distributed",
    "preemption": "operate",
    "oom": "operate",
    "profiling": "operate",
    "fsdp2": "pushback",
    "tensor-parallel": "pushback",
    "moe": "pushback",
}


def test_every_bundled_card_has_a_rubric_of_three_to_six_bullets() -> None:
    sizes = {entry.card.id: len(entry.card.rubric) for entry in ENTRIES}
    assert {card_id: n for card_id, n in sizes.items() if not 3 <= n <= 6} == {}


def _phases_drawn(entries: list[CardEntry]) -> set[str]:
    """The phases of the standard round that draw some of these cards (over a few seeds)."""
    phases = set()
    for seed in range(5):
        for prompt in plan_round(STANDARD, entries, rng=random.Random(seed)):
            if prompt.card_id is not None:
                phases.add(STANDARD.phases[prompt.phase_index].id)
    return phases


@pytest.mark.parametrize("topic", sorted(TOPIC_PHASES))
def test_the_standard_round_draws_each_topic_in_its_phase(topic: str) -> None:
    cards = [entry for entry in ENTRIES if topic in entry.card.tags]
    assert cards, f"no bundled card is tagged {topic}"
    assert TOPIC_PHASES[topic] in _phases_drawn(cards)


def test_every_phase_of_the_standard_round_has_cards_to_spare() -> None:
    """Each card pick has at least twice the cards it draws, so a repeat round varies."""
    for phase in STANDARD.phases:
        for pick in phase.picks:
            alone = STANDARD.model_copy(
                update={"phases": [phase.model_copy(update={"picks": [pick], "prompts": []})]}
            )
            drawn = {
                p.card_id
                for seed in range(40)
                for p in plan_round(alone, ENTRIES, rng=random.Random(seed))
            }
            assert len(drawn) >= 2 * pick.count, (phase.id, pick.tags, sorted(drawn))
