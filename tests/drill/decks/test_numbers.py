"""Numbers cards: a safe formula language, seeded drawings, and answers that match an
independent computation for every bundled numbers card."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.decks.index import load_index
from drill.decks.loader import check_paths, load_decks
from drill.decks.models import Card, Deck
from drill.decks.numbers import (
    NumbersError,
    draw,
    evaluate,
    fill,
    format_number,
    fresh_instance,
    parse_formula,
    parse_typed,
    shown_back,
    spec_of,
    suggested_rating,
)

HEAD = "deck: d\ntitle: D\ncards:\n"
NUMBERS_CARD = """\
  - id: ring
    level: easy
    front: |
      All-reduce {size} MB over {n} GPUs?
    back: |
      Bytes per GPU {moved} MB.
    numbers:
      vars:
        size: {min: 10, max: 100, step: 10, unit: MB}
        n: {choices: [2, 4, 8], unit: GPUs}
      let:
        moved: 2 * (n - 1) / n * size
      answer: FORMULA
      unit: MB
"""


def numbers_deck(formula: str = "moved", extra: str = "") -> str:
    return HEAD + NUMBERS_CARD.replace("FORMULA", formula) + extra


def problems_of(path: Path) -> list[str]:
    return [str(p) for p in check_paths([path])]


# --- the formula language -------------------------------------------------------------------------
def test_formulas_follow_arithmetic_precedence() -> None:
    names = {"n", "s", "b"}
    formula = parse_formula("2 * (n - 1) / n * s / b + -3 ^ 2 + max(1, 4, 2) + sqrt(16)", names)
    n, s, b = 8.0, 10.0, 100.0
    assert evaluate(formula, {"n": n, "s": s, "b": b}) == pytest.approx(
        2 * (n - 1) / n * s / b - 3**2 + 4 + 4
    )


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("__import__('os')", 'unexpected "\'"'),
        ("__import__(n)", "unknown name '__import__'"),
        ("n.real", "unexpected '.'"),
        ("2 ** 3", "unexpected '*'"),
        ("open(1)", "unknown name 'open'"),
        ("(" * 40 + "1" + ")" * 40, "nested deeper than"),
        ("1 +", "ends too early"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument"),
        ("1" * 401, "longer than 400"),
    ],
)
def test_formulas_outside_the_grammar_are_refused(formula: str, message: str) -> None:
    with pytest.raises(NumbersError, match=re.escape(message)):
        parse_formula(formula, {"n"})


@pytest.mark.parametrize("formula", ["1 / (n - n)", "10 ^ 400", "sqrt(0 - n)"])
def test_a_formula_that_cannot_be_computed_is_a_numbers_error(formula: str) -> None:
    with pytest.raises(NumbersError):
        evaluate(parse_formula(formula, {"n"}), {"n": 2.0})


# --- the loader -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("formula", "extra_var", "message"),
    [
        ("moved * gpus", "", "answer: unknown name 'gpus' in formula"),
        ("moved / (n - n)", "", "answer: division by zero"),
        (
            "moved",
            "        k: {min: 1, max: 2, unit: x}\n",
            "k: needs choices, or min, max and step",
        ),
        ("moved", "        k: {min: 1, max: 2, step: 1, choices: [1]}\n", "not both"),
    ],
)
def test_the_loader_names_a_bad_numbers_spec_in_one_line(
    write_deck: Callable[[str, str], Path], formula: str, extra_var: str, message: str
) -> None:
    text = numbers_deck(formula)
    if extra_var:
        text = text.replace("      let:\n", extra_var + "      let:\n")
    path = write_deck(
        "bad.yaml", text + "  - id: fine\n    level: easy\n    front: Q\n    back: A\n"
    )
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:") and "card ring: numbers" in problem
    assert message in problem and "\n" not in problem
    assert [c.id for c in load_decks([path.parent], include_bundled=False).decks[0].deck.cards] == [
        "fine"
    ]


def test_a_placeholder_that_names_no_value_is_refused(
    write_deck: Callable[[str, str], Path],
) -> None:
    path = write_deck("typo.yaml", numbers_deck().replace("{moved} MB", "{moves} MB"))
    (problem,) = problems_of(path)
    assert "card ring:" in problem and "back names {moves}, not a numbers value" in problem


def test_a_valid_numbers_card_loads_and_survives_the_cache(
    write_deck: Callable[[str, str], Path],
) -> None:
    path = write_deck("good.yaml", numbers_deck())
    assert problems_of(path) == []
    card = load_decks([path.parent], include_bundled=False).card("ring")
    index = load_index([path.parent], include_bundled=False)  # the first-paint path: cached data
    assert card is not None and index is not None
    record = index.card_record("ring")
    assert record is not None and record.numbers is not None
    from_model, from_cache = fresh_instance(card, seed=7), fresh_instance(record, seed=7)
    assert from_model is not None and from_cache is not None
    assert from_cache.drawn == from_model.drawn and from_cache.answer == from_model.answer
    # A cached card (model_construct, not validated again) still draws.
    cached_card = load_decks([path.parent], include_bundled=False).card("ring")
    assert fresh_instance(cached_card, seed=7) == from_model


# --- drawings -------------------------------------------------------------------------------------
def _card(text: str) -> Card:
    return Deck.model_validate(yaml.safe_load(text)).cards[0]


def test_the_same_seed_draws_the_same_numbers_and_others_differ() -> None:
    spec = spec_of(_card(numbers_deck()))
    assert spec is not None
    assert draw(spec, 42) == draw(spec, 42)
    drawings = {tuple(draw(spec, seed).drawn.items()) for seed in range(30)}
    assert len(drawings) > 5
    for drawing in drawings:  # every value lies on the declared grid or among the choices
        values = dict(drawing)
        assert values["size"] in {10.0 * k for k in range(1, 11)}
        assert values["n"] in {2.0, 4.0, 8.0}


def test_the_back_shows_the_drawn_numbers_the_steps_and_the_answer() -> None:
    card = _card(numbers_deck())
    instance = fresh_instance(card, seed=3)
    assert instance is not None
    size, n = instance.drawn["size"], instance.drawn["n"]
    moved = 2 * (n - 1) / n * size
    back = shown_back(card.back, instance)
    assert f"Bytes per GPU {format_number(moved)} MB." in back
    assert f"**Answer: {format_number(moved)} MB**" in back
    assert f"size = {format_number(size)} MB" in back and "(seed 3)" in back
    assert fill("{size} and {unknown}", instance) == f"{format_number(size)} and {{unknown}}"


@pytest.mark.parametrize(
    ("text", "value"),
    [("12.5", 12.5), (" 1,234 ", 1234.0), ("3e9", 3e9), ("45 %", 45.0), ("-2", -2.0)],
)
def test_a_typed_number_is_read(text: str, value: float) -> None:
    assert parse_typed(text) == value


@pytest.mark.parametrize("text", ["", "abc", "nan", "inf", "1e999", "1" * 41, "2 GB"])
def test_what_is_not_a_finite_number_is_not_read(text: str) -> None:
    assert parse_typed(text) is None


def test_the_suggested_rating_follows_the_error_against_the_tolerance() -> None:
    instance = fresh_instance(_card(numbers_deck()), seed=5)
    assert instance is not None and instance.spec.tolerance == 0.1
    answer = instance.answer
    suggested = [suggested_rating(answer * f, instance) for f in (1.0, 1.02, 0.95, 1.15, 0.75)]
    assert suggested == [4, 4, 3, 2, 1]


def test_numbers_are_shown_in_three_significant_figures() -> None:
    shown = [format_number(v) for v in (0, 8.0, 3.14159, 1234.5, 2604167, 1.092e14, -0.5)]
    assert shown == ["0", "8", "3.14", "1,234", "2,604,167", "1.09e14", "-0.5"]


# --- the bundled numbers cards, each against its own independent computation ----------------------
DAY, HOUR = 86_400, 3_600
INDEPENDENT: dict[str, Callable[[dict[str, float]], float]] = {
    "num-training-time": lambda v: (
        6
        * v["params_b"]
        * 1e9
        * v["tokens_t"]
        * 1e12
        / (v["gpus"] * v["peak_tflops"] * 1e12 * v["mfu"])
        / DAY
    ),
    "num-training-cost": lambda v: (
        (6 * v["params_b"] * v["tokens_t"] * 1e21 / (v["peak_tflops"] * 1e12 * v["mfu"]) / HOUR)
        * v["price"]
        / 1e6
    ),
    "num-tokens-per-second": lambda v: (
        v["peak_tflops"] * 1e12 * v["mfu"] / (6 * v["params_b"] * 1e9)
    ),
    "num-mfu-from-step-time": lambda v: 100 * v["mfu_target"],  # the step time was set from it
    "num-memory-adamw-sharded": lambda v: (2 + 2 + 4 + 4 + 4) * v["params_b"] / v["gpus"],
    "num-memory-sgd-momentum": lambda v: (4 + 4 + 4) * v["params_b"],
    "num-memory-8bit-adam": lambda v: (2 + 2 + 4 + 1 + 1) * v["params_b"],
    "num-activation-memory": lambda v: (
        v["seq"] * v["micro_batch"] * v["hidden"] * 34 * v["layers"] / 1e9
    ),
    "num-kv-cache-size": lambda v: (
        2 * v["layers"] * v["kv_heads"] * v["head_dim"] * 2 * v["context"] * v["batch"] / 1e9
    ),
    "num-allreduce-ring-time": lambda v: (
        2 * (v["gpus"] - 1) * v["alpha_us"] * 1e-3
        + 2 * (v["gpus"] - 1) / v["gpus"] * v["size_mb"] * 1e6 / (v["bw_gbs"] * 1e9) * 1e3
    ),
    "num-allreduce-tree-latency": lambda v: (v["gpus"] - 1) / math.log2(v["gpus"]),
    "num-allreduce-hierarchical": lambda v: (
        1e3
        * (
            2 * (v["per_node"] - 1) / v["per_node"] * v["size_gb"] / v["nvlink_gbs"]
            + 2 * (v["nodes"] - 1) / v["nodes"] * (v["size_gb"] / v["per_node"]) / v["nic_gbs"]
        )
    ),
    "num-checkpoint-size-time": lambda v: 12 * v["params_b"] / v["write_gbs"],
    "num-mtbf-checkpoint-interval": lambda v: (
        math.sqrt(2 * v["save_s"] * v["node_mtbf_days"] * DAY / v["nodes"]) / 60
    ),
    "num-pipeline-bubble": lambda v: 100 * (v["stages"] - 1) / (v["micro"] + v["stages"] - 1),
}


def _bundled_numbers_cards() -> dict[str, Card]:
    cards: dict[str, Card] = {}
    for path in bundled_deck_paths():
        deck = Deck.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        cards.update({card.id: card for card in deck.cards if card.numbers is not None})
    return cards


BUNDLED = _bundled_numbers_cards()


def test_every_bundled_numbers_card_has_an_independent_computation() -> None:
    assert sorted(BUNDLED) == sorted(INDEPENDENT)
    assert len(BUNDLED) >= 12


@pytest.mark.parametrize("card_id", sorted(INDEPENDENT))
def test_bundled_numbers_answers_match_an_independent_computation(card_id: str) -> None:
    spec = spec_of(BUNDLED[card_id])
    assert spec is not None
    for seed in range(40):
        instance = draw(spec, seed)
        assert instance.answer == pytest.approx(INDEPENDENT[card_id](instance.drawn), rel=1e-9)
        assert instance.answer > 0
