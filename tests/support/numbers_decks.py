"""A deck with one numbers card and one plain card, for the places that show a numbers card
outside review (the card browser, `drill cards`): its unit carries Rich markup and a control
byte, which must reach the screen as typed text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drill.decks.numbers import FIXED_SEED, draw, fill, spec_of

HOSTILE_UNIT = "[bold]MB[/bold]\x07"  # markup, and a bell that must never reach the terminal
NUMBERS_DECK = """\
deck: nums
title: Numbers
cards:
  - id: ring-bytes
    level: easy
    tags: [numbers]
    front: "All-reduce {size} MB over {n} GPUs: how much does each GPU send?"
    back: "2 (n - 1) / n of it: {answer}."
    rubric: [two passes]
    numbers:
      vars:
        size: {min: 10, max: 100, step: 10, unit: "[bold]MB[/bold]\\a"}
        n: {choices: [2, 4, 1024], unit: GPUs}
      answer: 2 * (n - 1) / n * size
      unit: MB
  - id: plain-card
    level: easy
    front: "What is {braced} text on a plain card?"
    back: Left as typed.
"""


def write_numbers_deck(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "nums.yaml").write_text(NUMBERS_DECK)
    return directory


def fixed_front(card: Any) -> str:
    """The card's front with the values of the fixed drawing, computed from the spec here."""
    spec = spec_of(card)
    assert spec is not None
    return fill(card.front, draw(spec, FIXED_SEED))
