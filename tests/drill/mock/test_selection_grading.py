from __future__ import annotations

import random

import pytest

from drill.decks.loader import load_decks
from drill.mock.errors import MockError
from drill.mock.loader import find_round, list_rounds, load_round_file
from drill.mock.models import RoundDef
from drill.mock.round import scaled_budgets
from drill.mock.rubric_bands import AGAIN, HARD, band, feedback_rating
from drill.mock.selection import CardEntry, plan_round
from tests.support.mock_rounds import CARDS, card, tiny_round


def test_bundled_rounds_load_and_standard_follows_the_seed_time_table():
    names = [d.round for d, _ in list_rounds()]
    assert {"standard", "quick"} <= set(names)
    standard = find_round("standard")
    assert [p.minutes for p in standard.phases] == [5, 10, 15, 10, 5 + 10]
    assert standard.total_minutes == 55
    four = [p for p in standard.phases[1].prompts if p.id == "four-questions"]
    assert four and "single metric" in four[0].text


def test_unknown_round_and_broken_file_are_one_line_errors(tmp_path):
    with pytest.raises(MockError, match=r"unknown round 'nope'; available: .*standard"):
        find_round("nope")
    bad = tmp_path / "round-bad.yaml"
    bad.write_text("round: bad\ntitle: t\nphases: []\n")
    with pytest.raises(MockError, match=r"round-bad.yaml: phases: .*at least 1"):
        load_round_file(bad)
    bad.write_text("round: [\n")
    with pytest.raises(MockError, match="YAML syntax error"):
        load_round_file(bad)


def test_minutes_scale_every_phase():
    assert scaled_budgets(tiny_round()) == [60.0, 120.0]
    assert scaled_budgets(tiny_round(), minutes=1.5) == [30.0, 60.0]


def test_pick_by_tags_takes_only_matching_cards_with_a_rubric():
    cards = [*CARDS, card("no-rubric", ["phase-pushback"], rubric=[])]
    for seed in range(20):
        planned = plan_round(tiny_round(), cards, rng=random.Random(seed))
        assert planned[0].key == "restart"
        assert planned[1].card_id in {"push-a", "push-b"}
        assert planned[1].rubric == ("optimizer state", "sampler position")


def test_never_the_previous_rounds_cards_while_others_remain():
    for seed in range(20):
        rng = random.Random(seed)
        planned = plan_round(tiny_round(), CARDS, previous_cards={"push-a"}, rng=rng)
        assert planned[1].card_id == "push-b"
    # with nothing else left, last round's card is used rather than an empty phase
    planned = plan_round(tiny_round(), CARDS[:1], previous_cards={"push-a"})
    assert planned[1].card_id == "push-a"


def test_mastery_mix_is_mostly_weak_cards_with_some_mastered():
    definition = RoundDef.model_validate(
        {
            "round": "mix",
            "title": "Mix",
            "phases": [
                {"id": "p", "title": "P", "minutes": 5, "picks": [{"tags": ["t"], "count": 4}]}
            ],
        }
    )
    cards = [card(f"weak-{i}", ["t"]) for i in range(6)] + [
        card(f"known-{i}", ["t"]) for i in range(6)
    ]
    mastery = {f"known-{i}": 60.0 for i in range(6)} | {"weak-0": 2.0}
    for seed in range(20):
        planned = plan_round(definition, cards, mastery, rng=random.Random(seed))
        chosen = [p.card_id for p in planned]
        assert len(chosen) == 4 and len(set(chosen)) == 4
        assert sum(c.startswith("known") for c in chosen) == 1


def test_bands_and_feedback_ratings():
    assert [band(s) for s in (1.0, 0.85, 0.7, 0.5, 0.1, 0.0)] == [
        "strong",
        "strong",
        "solid",
        "developing",
        "weak",
        "weak",
    ]
    assert feedback_rating([True, True]) is None
    assert feedback_rating([True, False]) == HARD
    assert feedback_rating([True, False, False]) == AGAIN
    assert feedback_rating([False, False]) == AGAIN


def test_a_numbers_card_is_asked_with_one_drawing_filled_in_never_its_raw_names():
    """A numbers card picked by a round (a phase tag on it) shows values, as review does; the
    drawing comes from the round's generator, so a seeded round asks the same numbers."""
    bundled = {c.id: c for loaded in load_decks([]).decks for c in loaded.deck.cards}
    numbers = bundled["num-training-cost"]
    assert "{params_b}" in numbers.front
    entry = CardEntry("estimates", numbers.model_copy(update={"tags": ["phase-pushback"]}))
    fronts = set()
    for seed in range(8):
        planned = plan_round(tiny_round(), [entry], rng=random.Random(seed))
        assert planned[1].card_id == "num-training-cost"
        assert "{" not in planned[1].text and "TFLOP/s" in planned[1].text
        assert planned[1].text == plan_round(tiny_round(), [entry], rng=random.Random(seed))[1].text
        fronts.add(planned[1].text)
    assert len(fronts) > 1  # each round draws anew
