"""The coding round's talk track: the rubric its notes are read against, per round phase, and the
hard cards the pushback phase asks (as the standard text round does).

Both come from the standard round (decks/round-standard.yaml): each phase's inline prompt rubric,
and its pushback picks (hard cards tagged phase-pushback, favouring cards not known well yet).
The cards are chosen once per round and kept in the round's state.json, so a resume asks the same.

    cards = choose_pushback(session, decks)             # the services' validated decks
    rubric = notes_rubric(session)                      # round phase id -> [(prompt, bullets)]
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from drill.mock.coding.session import CodingSession

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet

ROUND = "standard"
# coding round phase -> the standard round's phase whose rubric covers the same talk
STANDARD_PHASE = {
    "clarify": "clarify",
    "skeleton": "skeleton",
    "distributed": "distributed",
    "restart": "operate",
    "pushback": "pushback",
}


def _standard_round():  # -> RoundDef
    from drill.mock.loader import find_round

    return find_round(ROUND)


def choose_pushback(
    session: CodingSession, decks: DeckSet, rng: random.Random | None = None
) -> list[dict[str, Any]]:
    """The round's pushback cards ({card_id, deck_id, text, rubric}); chosen and saved on the
    first call, the saved ones afterwards."""
    if session.pushback:
        return session.pushback
    from drill.mock.feedback import card_entries
    from drill.mock.selection import plan_round

    definition = _standard_round()
    phase = next(p for p in definition.phases if p.id == "pushback")
    only_picks = definition.model_copy(
        update={"phases": [phase.model_copy(update={"prompts": []})]}
    )
    planned = plan_round(only_picks, card_entries(decks), rng=rng)
    session.pushback = [
        {"card_id": p.card_id, "deck_id": p.deck_id, "text": p.text, "rubric": list(p.rubric)}
        for p in planned
        if p.card_id
    ]
    session.save()
    return session.pushback


def notes_rubric(session: CodingSession) -> dict[str, list[tuple[str, list[str]]]]:
    """Round phase id -> [(the prompt, its rubric bullets)]: the standard round's inline prompts,
    and in the pushback phase also the round's pushback cards."""
    definition = _standard_round()
    by_id = {p.id: p for p in definition.phases}
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for ours, theirs in STANDARD_PHASE.items():
        phase = by_id.get(theirs)
        prompts = (
            [(" ".join(p.text.split()), list(p.rubric)) for p in phase.prompts] if phase else []
        )
        found[ours] = prompts
    for card in session.pushback:
        rubric = [str(b) for b in card.get("rubric") or []]
        if rubric:
            found["pushback"].append((" ".join(str(card.get("text", "")).split()), rubric))
    return found
