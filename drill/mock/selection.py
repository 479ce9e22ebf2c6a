"""Choose a round's prompts: inline prompts as written, cards by id or by tags with a mastery mix.

Mostly cards not yet known well, some mastered ones (a quarter of each pick, rounded), and never the
cards of the previous round of the same kind while other candidates remain.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from drill.decks.models import Card
from drill.decks.numbers import fresh_instance, shown_text
from drill.mock.models import CardPick, RoundDef

MASTERED_STABILITY_DAYS = 21.0  # FSRS stability at which a card counts as known well
MASTERED_SHARE = 0.25


@dataclass(frozen=True)
class PlannedPrompt:
    phase_index: int
    key: str  # inline prompt id, or "card:<id>"
    text: str
    rubric: tuple[str, ...]
    card_id: str | None = None
    deck_id: str | None = None


@dataclass(frozen=True)
class CardEntry:
    deck_id: str
    card: Card


def _matches(pick: CardPick, card: Card) -> bool:
    if pick.level is not None and card.level != pick.level:
        return False
    return not pick.tags or bool(set(pick.tags) & set(card.tags))


def _choose(
    candidates: list[CardEntry],
    count: int,
    mastery: dict[str, float],
    avoid: set[str],
    rng: random.Random,
) -> list[CardEntry]:
    fresh = [c for c in candidates if c.card.id not in avoid]
    stale = [c for c in candidates if c.card.id in avoid]
    rng.shuffle(fresh)
    rng.shuffle(stale)

    def mastered(entry: CardEntry) -> bool:
        return mastery.get(entry.card.id, 0.0) >= MASTERED_STABILITY_DAYS

    weak = [c for c in fresh if not mastered(c)]
    strong = [c for c in fresh if mastered(c)]
    want_strong = min(len(strong), round(count * MASTERED_SHARE))
    chosen = strong[:want_strong] + weak[: count - want_strong]
    # Not enough weak cards: fill with more mastered ones, then with last round's cards.
    for pool in (strong[want_strong:], stale):
        chosen += pool[: count - len(chosen)]
    rng.shuffle(chosen)
    return chosen


def _front(card: Card, rng: random.Random) -> str:
    """The prompt a card asks: a numbers card's front with one drawing filled in (drawn from the
    round's own generator, so a seeded round asks the same numbers), never its raw `{names}`."""
    instance = fresh_instance(card, seed=rng.randrange(2**31)) if card.numbers else None
    return shown_text(card.front, instance).strip()


def plan_round(
    definition: RoundDef,
    cards: list[CardEntry],
    mastery: dict[str, float] | None = None,
    previous_cards: set[str] | None = None,
    rng: random.Random | None = None,
) -> list[PlannedPrompt]:
    """The prompts of a new round in play order. `mastery` maps card id -> FSRS stability (days);
    `previous_cards` are the card ids of the last round of this kind (avoided when possible).
    Cards without a rubric cannot be graded and are never picked."""
    mastery = mastery or {}
    rng = rng or random.Random()
    avoid = set(previous_cards or ())
    by_id = {entry.card.id: entry for entry in cards}
    gradable = [entry for entry in cards if entry.card.rubric]
    used: set[str] = set()
    planned: list[PlannedPrompt] = []
    for index, phase in enumerate(definition.phases):
        for prompt in phase.prompts:
            text, rubric = prompt.text.strip(), tuple(prompt.rubric)
            planned.append(PlannedPrompt(index, prompt.id, text, rubric))
        for pick in phase.picks:
            if pick.card is not None:
                entry = by_id.get(pick.card)
                chosen = [entry] if entry is not None and entry.card.id not in used else []
            else:
                candidates = [
                    e for e in gradable if e.card.id not in used and _matches(pick, e.card)
                ]
                chosen = _choose(candidates, pick.count, mastery, avoid, rng)
            for entry in chosen:
                used.add(entry.card.id)
                planned.append(
                    PlannedPrompt(
                        index,
                        f"card:{entry.card.id}",
                        _front(entry.card, rng),
                        tuple(entry.card.rubric),
                        entry.card.id,
                        entry.deck_id,
                    )
                )
    return planned
