"""The coding round's talk track: the rubric its notes are read against, per round phase: the
standard round's inline prompts (decks/round-standard.yaml). The pushback phase's follow-up
questions about the candidate's own code are drill.mock.coding.pushback's, each answered and
read under its own heading.

    rubric = notes_rubric(session)                      # round phase id -> [(prompt, bullets)]
"""

from __future__ import annotations

from drill.mock.coding.phases import ROUND, STANDARD_PHASE
from drill.mock.coding.session import CodingSession

__all__ = ["ROUND", "STANDARD_PHASE", "notes_rubric"]


def _standard_round():  # -> RoundDef
    from drill.mock.loader import find_round

    return find_round(ROUND)


IN_A_NOTEBOOK = " in a notebook"  # the interviewer's words; true of a notebook round only


def notes_rubric(session: CodingSession) -> dict[str, list[tuple[str, list[str]]]]:
    """Round phase id -> [(the prompt, its rubric bullets)]: the standard round's inline
    prompts (`session` is the round whose talk track it is). A round played in the app's
    editor drops "in a notebook" from the prompt: there is no notebook in it."""
    definition = _standard_round()
    by_id = {p.id: p for p in definition.phases}
    in_app = session.notebook_path is None
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for ours, theirs in session.prompt.talk_phases.items():
        phase = by_id.get(theirs)
        prompts = []
        for prompt in phase.prompts if phase else []:
            text = " ".join(prompt.text.split())
            prompts.append((text.replace(IN_A_NOTEBOOK, "") if in_app else text,
                            list(prompt.rubric)))  # fmt: skip
        found[ours] = prompts
    return found
