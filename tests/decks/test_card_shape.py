"""Cards that work as flashcards: short backs, and merged ids whose history can follow them."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.decks.models import Deck
from tests.support.card_text import word_count

MAX_BACK_WORDS = 120
# Cards merged into another (merged id -> the card that stays and lists it in `replaces`).
MERGED = {
    "map-restart-state": "llm-checkpoint-contents",
    "cheat-amp-scaler-state": "llm-fp16-loss-scaling",
    "hard-collective-deadlock": "llm-midrun-hang",
    "llm-checkpoint-frequency": "hard-checkpoint-frequency",
    "llm-throughput-low-gpu-util": "llm-mfu-improve",
    "map-migration-trigger": "hard-ddp-or-fsdp",
    "llm-memory-throughput-ladders": "llm-13b-memory-ladder",
    "bio-bf16-long-sequences": "llm-bf16-vs-fp16",
    "bio-activation-checkpointing": "llm-activation-checkpointing-pytorch",
    "map-default-failure-model": "hard-restart-scope",
    "llm-qlora-basics": "llm-qlora-single-gpu",
    "llm-rlhf-vs-dpo": "llm-sft-rlhf-dpo",
}


def _load(path: Path) -> Deck:
    with path.open(encoding="utf-8") as handle:
        return Deck.model_validate(yaml.safe_load(handle))


DECKS = {path.name: _load(path) for path in bundled_deck_paths()}
LIVE_IDS = {card.id for deck in DECKS.values() for card in deck.cards}
REPLACED = [
    (card.id, old) for deck in DECKS.values() for card in deck.cards for old in card.replaces
]


def test_word_count_skips_markup_but_counts_code() -> None:
    table = "| Missing | Symptom |\n|---|---|\n| RNG state | new dropout masks |"
    assert word_count(table) == 7
    assert word_count("- x = f(y)  → z") == 3
    assert word_count("") == 0


@pytest.mark.parametrize("name", sorted(DECKS))
def test_backs_answer_in_at_most_120_words(name: str) -> None:
    long_backs = {
        card.id: word_count(card.back)
        for card in DECKS[name].cards
        if word_count(card.back) > MAX_BACK_WORDS
    }
    assert long_backs == {}, f"backs over {MAX_BACK_WORDS} words (move the rest to `more:`)"


def test_a_replaced_id_is_not_a_live_card() -> None:
    assert sorted(old for _, old in REPLACED if old in LIVE_IDS) == []


def test_a_replaced_id_is_claimed_by_one_card_only() -> None:
    counts = Counter(old for _, old in REPLACED)
    assert sorted(old for old, n in counts.items() if n > 1) == []


def test_a_card_does_not_replace_itself() -> None:
    assert [card for card, old in REPLACED if card == old] == []


def test_merged_cards_hand_their_history_to_the_card_that_stays() -> None:
    followed = {old: card for card, old in REPLACED}
    assert {old: followed.get(old) for old in MERGED} == MERGED
    assert sorted(set(MERGED) & LIVE_IDS) == []


SPLIT = {  # multi-question cards split in two (the id kept by the first half)
    "bio-length-curriculum": "bio-length-curriculum-state",
    "llm-pipeline-bubbles": "llm-pipeline-schedules",
    "llm-mfu-improve": "llm-low-gpu-util-phases",  # how to speed up / where 40 % util goes
}


def test_a_front_asks_one_question() -> None:
    fronts = {card.id: card.front for deck in DECKS.values() for card in deck.cards}
    assert {card_id: f for card_id, f in fronts.items() if f.count("?") > 1} == {}
    assert all(first in fronts and second in fronts for first, second in SPLIT.items())


_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_COUNT_WORDS |= {"nine": 9, "ten": 10}
# "Name four kinds of ...", "which three metrics": the first count word, unless it counts time
# or describes the setting ("a two-node job", "from two nodes to one").
_SETTING = r"(?!-)(?!\s+(?:minutes|hours|days|weeks|nodes|ranks|GPUs|processes)\b)"
_COUNT = re.compile(r"\b(" + "|".join(_COUNT_WORDS) + r")\b" + _SETTING, re.IGNORECASE)


def asked_count(front: str) -> int | None:
    """How many things a front asks for ("Name four ...", "which three ..."), else None."""
    found = _COUNT.search(front)
    return _COUNT_WORDS[found.group(1).lower()] if found else None


def test_asked_count_reads_the_number_a_front_asks_for() -> None:
    assert asked_count("Name four kinds of sentence that signal judgment.") == 4
    assert asked_count("If you could emit only three metrics, which three?") == 3
    assert asked_count("Probe four areas. Name them, with two or three topics each.") == 4
    assert asked_count("RLHF versus DPO in two minutes.") is None
    assert asked_count("A two-node job loses a node. What does the agent do?") is None
    assert asked_count("A job shrinks from two nodes to one. Name three effects.") == 3
    assert asked_count("A 13B model does not fit on 8 GPUs. What do you change?") is None


def test_a_name_n_things_front_has_n_rubric_items() -> None:
    """A card that asks for N things is graded on exactly N rubric items, one per thing."""
    cards = [card for deck in DECKS.values() for card in deck.cards]
    counted = {card.id: (asked_count(card.front), len(card.rubric)) for card in cards}
    assert {i: (n, items) for i, (n, items) in counted.items() if n and n != items} == {}
    assert sum(1 for n, _ in counted.values() if n) >= 10  # the detector still finds them
