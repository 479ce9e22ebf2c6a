"""The coding round's phases: the interview's time table (seed 001), which grader phases check
each round phase's work, and the standard (talk) round phase whose rubric covers its talk. Data
only: every coding-round module reads it, and it imports none of them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodingPhase:
    id: str
    title: str
    minutes: float
    grades: tuple[str, ...]  # the grader phases that check this round phase's work


# The interview's time table (seed 001): clarify, skeleton, distributed lift, monitoring and
# restart, then pushback while the full grading runs.
CODING_PHASES = (
    CodingPhase("clarify", "Clarify assumptions", 5, ()),
    CodingPhase("skeleton", "Config, dataset, single-process skeleton", 10, ("skeleton",)),
    CodingPhase("distributed", "Distributed lift", 15, ("distributed",)),
    CodingPhase("restart", "Monitoring and restart", 10, ("restart", "torn", "monitoring")),
    CodingPhase(
        "pushback",
        "Full grading and pushback",
        15,
        ("skeleton", "distributed", "restart", "torn", "monitoring"),
    ),
)
PUSHBACK = len(CODING_PHASES) - 1  # the last round phase: follow-ups about the user's code
ALL_GRADER_PHASES = CODING_PHASES[PUSHBACK].grades  # the pushback's and the end's: everything

# The talk track: the standard round (decks/round-standard.yaml) and, per coding round phase,
# the standard round's phase whose rubric covers the same talk (drill.mock.coding.talk).
ROUND = "standard"
STANDARD_PHASE = {
    "clarify": "clarify",
    "skeleton": "skeleton",
    "distributed": "distributed",
    "restart": "operate",
    "pushback": "pushback",
}
