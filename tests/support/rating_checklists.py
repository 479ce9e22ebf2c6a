"""Helpers for the rating-checklist tests (drill.mock.checklist, its screen and the coding
round's confirm): the issue's checklist entries and a rater that records each call."""

from __future__ import annotations

from collections.abc import Callable

from drill.mock.checklist import ChecklistEntry, ChecklistItem
from drill.review.outside import RESCHEDULED, CardChange


def entries() -> list[ChecklistEntry]:
    """The issue's case: a follow-up answered well that the matcher ticked 0 of 4, and a
    failed check."""
    followup = ChecklistEntry(
        "Follow-up Q1: how does FSDP2 + DCP resume at another world size?",
        [ChecklistItem(text, proposed=False) for text in ("a", "b", "c", "d")],
        (("llm-zero-stages", "llm"),),
        why="a follow-up",
    )
    check = ChecklistEntry(
        "Check failed: sample 17 seen twice",
        [ChecklistItem("distributed.exactly_once held", proposed=False)],
        (("map-sampler", "map"), ("llm-zero-stages", "llm")),
        why="a failed check",
    )
    unanswered = ChecklistEntry("Follow-up Q2", [ChecklistItem("x", False)], (("c", "d"),), False)
    return [followup, check, unanswered]


def recording(rated: list) -> Callable[[str, str, int], CardChange]:
    """A rater that records each call and reports the card rescheduled."""

    def rate(card_id: str, deck_id: str, rating: int) -> CardChange:
        rated.append((card_id, deck_id, rating))
        return CardChange(card_id, rating, RESCHEDULED)

    return rate
