"""Claims that can fail, checked statically over the bundled decks: no claim echoes a
param of its own card or pins a quantity only to its trivial range, and every lab-linked card
has at least one sabotage setting that `drill verify --strength` reruns its lab under. Whether
the sabotage actually breaks a claim needs the labs: tests/drill/labs/test_strength.py runs a
subset, `drill verify --strength` all of them."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from drill.claims.grammar import Comparison, parse_claim
from drill.decks import links
from drill.decks.loader import load_decks
from drill.decks.models import Card
from drill.labs.strength import sabotaged_jobs
from drill.labs.verify import LinkedCard, linked_cards
from trainer_lab.catalogue import get_lab

CARDS = linked_cards(load_decks(None, link_checks=links.LAB_LINK_CHECKS))


def echoes(card: Card) -> list[str]:
    """Comparisons `name == value` where `name` (its last part) is a param the card sets to
    that very value: the claim restates the input (`resume_step == 8`)."""
    assert card.lab is not None
    found = []
    for text in card.lab.expect:
        for c in parse_claim(text).comparisons:
            param = c.name.rsplit(".", 1)[-1]
            if c.op == "==" and param in card.lab.params and card.lab.params[param] == c.value:
                found.append(f"{card.id}: {text}")
    return found


# Quantities positive in every run that completes: `> 0` on them tests nothing.
POSITIVE_BY_CONSTRUCTION = {"tokens_per_s", "peak_flops", "achieved_flops", "step_s", "params"}


def _trivial_range(comparisons: tuple[Comparison, ...]) -> bool:
    """`x > 0 and x <= 1` (the range of any share or MFU), or `tokens_per_s > 0`."""
    lower = {c.name for c in comparisons if c.op in (">", ">=") and c.value == 0}
    upper = {c.name for c in comparisons if c.op in ("<", "<=") and c.value == 1}
    positive = {name for name in lower if name.rsplit(".", 1)[-1] in POSITIVE_BY_CONSTRUCTION}
    return bool(lower & upper) or bool(positive)


def trivial(card: Card) -> list[str]:
    assert card.lab is not None
    return [
        f"{card.id}: {text}"
        for text in card.lab.expect
        if _trivial_range(parse_claim(text).comparisons)
    ]


# Observations whose value does not depend on what the run did: dtype limits, the model's
# shape, settings reported back. A claim over one restates a constant or arithmetic (e.g.
# `finfo.float16.max == 65504` and, at LoRA rank 1, `trainable_params <= 1000`).
CONSTANT_OBSERVATIONS: dict[str, tuple[str, ...]] = {
    "precision": ("finfo.*",),
    "lora": ("adapter_rank", "alpha", "adapter_params_formula", "adapted_linears", "*.params"),
    "forgetting": ("variants.*.lr", "variants.*.trainable_params"),
    "mfu-ladder": ("params", "matmul_params", "peak_source", "ladder", "top_rung"),
    "throughput-mfu": ("params", "matmul_params", "peak_source", "seq_len"),
}

# Observations a lab derives to equal one of its params when it works as designed (the period
# of the spikes is the save interval): `==` to that param's value restates the param under
# another name (`sync.period == 10` with `checkpoint_every: 10`).
ECHOED_PARAMS: dict[str, dict[str, str]] = {
    "step-phases": {"sync.period": "checkpoint_every"},
    "lora": {"adapter_rank": "rank", "alpha": "alpha"},
}


def constants(card: Card) -> list[str]:
    """Claims with a comparison over an observation that is a constant of the lab."""
    assert card.lab is not None
    patterns = CONSTANT_OBSERVATIONS.get(card.lab.run, ())
    return [
        f"{card.id}: {text}"
        for text in card.lab.expect
        if any(fnmatchcase(c.name, p) for c in parse_claim(text).comparisons for p in patterns)
    ]


def renamed_echoes(card: Card) -> list[str]:
    """`obs == value` where the lab derives `obs` from a param the card runs at that value."""
    assert card.lab is not None
    aliases = ECHOED_PARAMS.get(card.lab.run, {})
    if not aliases:
        return []
    defaults = {param.name: param.default for param in get_lab(card.lab.run).params}
    values = {**defaults, **card.lab.params}
    return [
        f"{card.id}: {text}"
        for text in card.lab.expect
        for c in parse_claim(text).comparisons
        if c.op == "==" and c.name in aliases and values.get(aliases[c.name]) == c.value
    ]


def _card(expect: list[str], params: dict, run: str = "throughput-mfu") -> Card:
    lab = {"run": run, "params": params, "expect": expect}
    return Card.model_validate({"id": "c", "level": "easy", "front": "q", "back": "a", "lab": lab})


def test_the_detectors_catch_echoed_params_and_trivial_ranges() -> None:
    assert echoes(_card(["resume_step == 8"], {"resume_step": 8})) == ["c: resume_step == 8"]
    assert echoes(_card(["hang.collective_timeout_s == 3.0"], {"collective_timeout_s": 3.0}))
    assert echoes(_card(["resume_step == 9"], {"resume_step": 8})) == []
    assert trivial(_card(["mfu > 0 and mfu <= 1"], {})) == ["c: mfu > 0 and mfu <= 1"]
    assert trivial(_card(["tokens_per_s > 0 and peak_flops > 0"], {}))
    assert trivial(_card(["mfu > 0.3 and mfu <= 1"], {})) == []
    assert trivial(_card(["no_sampler_state.duplicated > 0"], {})) == []  # a count: behaviour


def test_the_detectors_catch_constants_and_params_echoed_under_another_name() -> None:
    mixed = "finfo.float16.max == 65504 and overflow.bf16.nonfinite_loss_steps == 0"
    assert constants(_card([mixed], {}, "precision")) == [f"c: {mixed}"]
    lora = _card(["variants.lora.trainable_params <= 1000"], {}, "forgetting")
    assert constants(lora) == ["c: variants.lora.trainable_params <= 1000"]
    assert constants(_card(["overflow.fp16.nonfinite_loss_steps > 0"], {}, "precision")) == []
    period = ["sync.period == 10"]
    assert renamed_echoes(_card(period, {"checkpoint_every": 10}, "step-phases")) == [
        "c: sync.period == 10"
    ]
    assert renamed_echoes(_card(period, {}, "step-phases"))  # the default is 10
    assert renamed_echoes(_card(period, {"checkpoint_every": 5}, "step-phases")) == []
    assert renamed_echoes(_card(["sync.period > 0"], {}, "step-phases")) == []


def test_no_bundled_claim_echoes_a_param_or_states_a_trivial_range() -> None:
    found = [line for linked in CARDS for line in echoes(linked.card) + trivial(linked.card)]
    assert found == []


def test_no_bundled_claim_restates_a_constant_or_a_renamed_param() -> None:
    found = [
        line for linked in CARDS for line in constants(linked.card) + renamed_echoes(linked.card)
    ]
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
