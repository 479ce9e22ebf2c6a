"""How well the offline rubric matcher (drill.mock.coverage) reads a right answer, and how often it
ticks an item the answer does not state, over the bundled decks' cards.

    python benchmarks/rubric_recall.py [--coverage PATH] [--shift 1]

Corpus: every card in decks/*.yaml with a `back` and a `rubric`. Two rates over rubric items:
  own    the card's own back read as the answer: the share of its rubric items ticked (recall; a
         back is written to state its rubric, so higher is better)
  other  another card's back (the card --shift places later in the corpus, wrapping) read against
         this card's rubric: the share ticked (false ticks; lower is better)
  other* the same over every other card of the same deck (all pairs)
plus the share of items left partial by the own back. --coverage loads another version of
coverage.py (e.g. `git show REV:drill/mock/coverage.py > /tmp/old.py`), to compare before and
after on the same corpus. Prints one line per rate.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_coverage(path: Path | None) -> ModuleType:
    if path is None:
        from drill.mock import coverage

        return coverage
    spec = importlib.util.spec_from_file_location("coverage_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def corpus() -> list[tuple[str, str, list[str]]]:
    """(deck, back, rubric) for every bundled card that has both."""
    cards = []
    for path in sorted((ROOT / "decks").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        for card in data.get("cards") or []:
            back, rubric = card.get("back"), card.get("rubric")
            if isinstance(back, str) and isinstance(rubric, list) and rubric:
                cards.append((str(data.get("deck")), back, [str(item) for item in rubric]))
    return cards


def rates(coverage: ModuleType, cards: list[tuple[str, str, list[str]]], shift: int) -> dict:
    own = partial = other = items = 0
    pair_ticks = pair_items = 0
    for index, (deck, back, rubric) in enumerate(cards):
        results = coverage.cover(back, rubric)
        own += sum(r.status.value == "covered" for r in results)
        partial += sum(r.status.value == "partial" for r in results)
        items += len(rubric)
        other_back = cards[(index + shift) % len(cards)][1]
        other += sum(r.status.value == "covered" for r in coverage.cover(other_back, rubric))
        for j, (other_deck, back_j, _) in enumerate(cards):
            if j != index and other_deck == deck:
                ticked = coverage.cover(back_j, rubric)
                pair_ticks += sum(r.status.value == "covered" for r in ticked)
                pair_items += len(rubric)
    return {
        "cards": len(cards),
        "items": items,
        "own": own / items,
        "own_partial": partial / items,
        "other": other / items,
        "other_all_pairs": pair_ticks / max(pair_items, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coverage", type=Path, help="a coverage.py to measure instead")
    parser.add_argument("--shift", type=int, default=1)
    args = parser.parse_args()
    found = rates(load_coverage(args.coverage), corpus(), args.shift)
    print(f"corpus: {found['cards']} cards, {found['items']} rubric items")
    partial = f"(partial {found['own_partial']:.1%})"
    print(f"own back ticks its rubric:        {found['own']:.1%}  {partial}")
    print(f"another card's back ticks:        {found['other']:.1%}")
    print(f"same-deck other backs tick:       {found['other_all_pairs']:.1%}")


if __name__ == "__main__":
    main()
