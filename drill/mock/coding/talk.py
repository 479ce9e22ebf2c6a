"""The coding round's talk track: the rubric its notes are read against, per round phase: the
standard round's inline prompts (decks/round-standard.yaml). The pushback phase's follow-up
questions about the candidate's own code are drill.mock.coding.pushback's, each answered and
read under its own heading.

    rubric = notes_rubric(session)                      # round phase id -> [(prompt, bullets)]
"""

from __future__ import annotations

from drill.mock.coding.session import CodingSession

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


def notes_rubric(session: CodingSession) -> dict[str, list[tuple[str, list[str]]]]:
    """Round phase id -> [(the prompt, its rubric bullets)]: the standard round's inline
    prompts (`session` is the round whose talk track it is)."""
    definition = _standard_round()
    by_id = {p.id: p for p in definition.phases}
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for ours, theirs in STANDARD_PHASE.items():
        phase = by_id.get(theirs)
        prompts = (
            [(" ".join(p.text.split()), list(p.rubric)) for p in phase.prompts] if phase else []
        )
        found[ours] = prompts
    return found
