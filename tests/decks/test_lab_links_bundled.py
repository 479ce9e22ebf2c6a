"""The bundled decks' lab links: `drill decks check` accepts them, and every lab is linked twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from decks import bundled_deck_paths
from drill.cli.main import main
from drill.decks.links import card_link_problems
from drill.decks.models import Deck
from trainer_lab.catalogue import CATALOGUE


def _decks() -> list[Deck]:
    decks = []
    for path in bundled_deck_paths():
        with path.open(encoding="utf-8") as handle:
            decks.append(Deck.model_validate(yaml.safe_load(handle)))
    return decks


def _links_per_lab() -> Counter[str]:
    return Counter(card.lab.run for deck in _decks() for card in deck.cards if card.lab)


@pytest.fixture()
def throwaway_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.delenv("DRILL_DECKS", raising=False)
    return home


def test_bundled_decks_pass_decks_check(
    throwaway_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["decks", "check"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no problems" in out


def test_no_bundled_card_has_a_link_problem() -> None:
    problems = {
        card.id: found
        for deck in _decks()
        for card in deck.cards
        if (found := card_link_problems(card))
    }
    assert problems == {}


def test_a_broken_claim_in_a_bundled_card_would_be_caught() -> None:
    card = next(c for deck in _decks() for c in deck.cards if c.lab and c.lab.run == "resume")
    assert card.lab is not None
    broken_lab = card.lab.model_copy(update={"expect": ["modes.full.bit_identicl == true"]})
    problems = card_link_problems(card.model_copy(update={"lab": broken_lab}))
    assert [key for key, _ in problems] == ["lab"]
    assert "bit_identicl" in problems[0][1]


def test_every_catalogue_lab_is_linked_from_at_least_two_cards() -> None:
    links = _links_per_lab()
    short = {name: links[name] for name in CATALOGUE if links[name] < 2}
    assert short == {}, f"labs linked from fewer than two cards: {short}"
    assert set(links) <= set(CATALOGUE)


def test_predict_blocks_only_on_linked_cards_and_with_two_or_more_choices() -> None:
    cards = [card for deck in _decks() for card in deck.cards if card.predict]
    assert cards, "no predict block in the bundled decks"
    assert all(card.lab is not None for card in cards)
    assert all(len(card.predict.choices) >= 2 for card in cards if card.predict)
