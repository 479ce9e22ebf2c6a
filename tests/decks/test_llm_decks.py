"""Checks on the llm-* decks that cover seed 003: they validate, ids are unique across every
bundled deck, rubrics have 3-6 bullets, and every seed-003 question maps to existing cards."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.decks.models import Deck
from tests.support.seed_coverage_003 import COVERAGE_003


def _load(path: Path) -> Deck:
    with path.open(encoding="utf-8") as handle:
        return Deck.model_validate(yaml.safe_load(handle))


LLM_PATHS = [p for p in bundled_deck_paths() if p.name.startswith("llm-")]
LLM_DECKS = {p.name: _load(p) for p in LLM_PATHS}
LLM_CARD_IDS = {card.id for deck in LLM_DECKS.values() for card in deck.cards}


def test_llm_decks_are_bundled() -> None:
    assert sorted(LLM_DECKS) == ["llm-finetuning.yaml", "llm-scale.yaml", "llm-training.yaml"]


@pytest.mark.parametrize("name", sorted(LLM_DECKS))
def test_deck_id_matches_file_name(name: str) -> None:
    assert LLM_DECKS[name].deck == Path(name).stem


@pytest.mark.parametrize("name", sorted(LLM_DECKS))
def test_cards_are_complete(name: str) -> None:
    deck = LLM_DECKS[name]
    assert deck.cards
    for card in deck.cards:
        assert 3 <= len(card.rubric) <= 6, f"{card.id}: {len(card.rubric)} rubric bullets"
        assert all(bullet.strip() for bullet in card.rubric), card.id
        assert card.tags, f"{card.id} has no tags"
        assert card.id.startswith("llm-"), card.id


def test_card_ids_unique_across_all_bundled_decks() -> None:
    ids = [card.id for path in bundled_deck_paths() for card in _load(path).cards]
    duplicates = sorted(card_id for card_id, n in Counter(ids).items() if n > 1)
    assert duplicates == []


def test_every_coverage_key_names_existing_cards() -> None:
    missing = {
        key: [card_id for card_id in ids if card_id not in LLM_CARD_IDS]
        for key, ids in COVERAGE_003.items()
    }
    assert {key: ids for key, ids in missing.items() if ids} == {}
    assert all(COVERAGE_003.values()), "a coverage key has no card"


def test_coverage_has_one_key_per_seed_question() -> None:
    # Seed 003 asks 15 easy, 15 medium, 16 hard and 16 scenario questions, plus the closing
    # "what industry actually asks" exercise.
    sections = Counter(key.split("-", 1)[0] for key in COVERAGE_003)
    assert sections == {"easy": 15, "medium": 15, "hard": 16, "scenario": 16, "industry": 1}


def test_every_llm_card_covers_some_seed_question() -> None:
    covered = {card_id for ids in COVERAGE_003.values() for card_id in ids}
    assert sorted(LLM_CARD_IDS - covered) == []
