"""Checks on the decks covering seeds 000, 001, 002 and 004, and on card ids across all decks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.decks.links import card_link_problems
from drill.decks.models import Deck
from tests.support.seed_coverage_other import COVERAGE_000, COVERAGE_001, COVERAGE_002, COVERAGE_004

OWN_DECKS = ("staff-hard.yaml", "interview-map.yaml", "cheatsheet.yaml", "biotech.yaml")
COVERAGE = {
    "000": COVERAGE_000,
    "001": COVERAGE_001,
    "002": COVERAGE_002,
    "004": COVERAGE_004,
}


def _load(path: Path) -> Deck:
    with path.open(encoding="utf-8") as handle:
        return Deck.model_validate(yaml.safe_load(handle))


def _own_paths() -> list[Path]:
    by_name = {p.name: p for p in bundled_deck_paths()}
    return [by_name[name] for name in OWN_DECKS if name in by_name]


def _all_card_ids() -> list[str]:
    return [card.id for path in bundled_deck_paths() for card in _load(path).cards]


def test_own_decks_are_bundled() -> None:
    assert [p.name for p in _own_paths()] == list(OWN_DECKS)


@pytest.mark.parametrize("name", OWN_DECKS)
def test_deck_validates_and_cards_are_complete(name: str) -> None:
    deck = _load(next(p for p in _own_paths() if p.name == name))
    assert deck.cards, f"{name} has no cards"
    for card in deck.cards:
        assert 3 <= len(card.rubric) <= 6, f"{card.id}: {len(card.rubric)} rubric bullets"
        assert all(bullet.strip() for bullet in card.rubric), card.id
        assert card.tags, f"{card.id} has no tags"
        # A predict block needs a lab; the links themselves are valid (`drill decks check`).
        assert card.predict is None or card.lab is not None, card.id
        assert card_link_problems(card) == [], card.id


def test_card_ids_unique_across_all_decks() -> None:
    counts = Counter(_all_card_ids())
    duplicates = sorted(card_id for card_id, n in counts.items() if n > 1)
    assert duplicates == []


@pytest.mark.parametrize("seed", sorted(COVERAGE))
def test_every_seed_item_is_covered_by_existing_cards(seed: str) -> None:
    known = set(_all_card_ids())
    coverage = COVERAGE[seed]
    assert coverage, f"seed {seed} has no coverage keys"
    empty = [key for key, ids in coverage.items() if not ids]
    missing = sorted({i for ids in coverage.values() for i in ids} - known)
    assert empty == [], f"seed {seed}: keys without a card"
    assert missing == [], f"seed {seed}: coverage names unknown cards"


def test_every_own_card_covers_some_seed_item() -> None:
    covering = {i for coverage in COVERAGE.values() for ids in coverage.values() for i in ids}
    own = {card.id for path in _own_paths() for card in _load(path).cards}
    assert sorted(own - covering) == []


PHASE_TAGS = (
    "phase-clarify",
    "phase-skeleton",
    "phase-distributed",
    "phase-operate",
    "phase-pushback",
)


def test_every_mock_round_phase_has_cards() -> None:
    tags = Counter(tag for path in _own_paths() for card in _load(path).cards for tag in card.tags)
    assert {tag: tags[tag] for tag in PHASE_TAGS if tags[tag] < 4} == {}
