"""Claims that can fail, checked statically over the bundled decks: no claim echoes a
param of its own card, an observation its lab computes from its inputs, or pins a quantity
only to its trivial range, and every lab-linked card
has at least one sabotage setting that `drill verify --strength` reruns its lab under. Whether
the sabotage actually breaks a claim needs the labs: tests/drill/labs/test_strength.py runs a
subset, `drill verify --strength` all of them."""

from __future__ import annotations

import pytest

from drill.decks import links
from drill.decks.loader import load_decks
from drill.labs.strength import echo_claims, sabotaged_jobs, world_size_problems
from drill.labs.verify import LinkedCard, linked_cards

CARDS = linked_cards(load_decks(None, link_checks=links.LAB_LINK_CHECKS))


def test_no_bundled_claim_echoes_its_inputs_or_states_a_trivial_range() -> None:
    """`drill verify --strength`'s static check (unit-tested in tests/drill/labs/
    test_strength.py) over every bundled card."""
    found = [f"{linked.card.id}: {echo}" for linked in CARDS for echo in echo_claims(linked.card)]
    assert found == []


def test_every_lab_linked_card_pins_its_world_size_or_holds_at_two_and_three() -> None:
    """A card that pins no world size runs at whatever size the panel allows: its lab must
    accept W=2 and W=3 and no claim may name a rank by number (unit-tested in tests/drill/labs/
    test_strength.py; tests/drill/labs/test_verify_world_size.py runs quick labs at both)."""
    found = [f"{c.card.id}: {problem}" for c in CARDS for problem in world_size_problems(c.card)]
    assert found == []


@pytest.mark.parametrize("linked", CARDS, ids=lambda linked: linked.card.id)
def test_every_lab_linked_card_can_be_sabotaged(linked: LinkedCard) -> None:
    """A card whose lab has no sabotage its params leave free is never put to the test."""
    assert sabotaged_jobs(linked), f"{linked.card.lab.run if linked.card.lab else ''}"


# The biotech and fine-tuning decks link labs of their own, not only the generic LLM labs.
OWN_LABS = {
    "biotech": {"equivariance", "masked-loss", "sparse-rows", "split-leakage"},
    "llm-finetuning": {"lora", "forgetting"},
}


@pytest.mark.parametrize("deck", sorted(OWN_LABS))
def test_deck_has_its_own_labs_each_on_two_cards_with_a_predict_block(deck: str) -> None:
    from trainer_lab.catalogue import CATALOGUE

    predicted: dict[str, int] = {}
    for linked in CARDS:
        lab = linked.card.lab
        if linked.deck_id == deck and lab is not None and lab.run in OWN_LABS[deck]:
            predicted[lab.run] = predicted.get(lab.run, 0) + (linked.card.predict is not None)
    assert OWN_LABS[deck] <= set(CATALOGUE)
    assert {
        name: predicted.get(name, 0) for name in OWN_LABS[deck] if predicted.get(name, 0) < 2
    } == {}
