"""Shared builders for mock-round tests."""

from __future__ import annotations

from datetime import UTC, datetime

from drill.decks.models import Card
from drill.mock.models import RoundDef
from drill.mock.selection import CardEntry

FIXED_WALL = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)


def card(card_id: str, tags: list[str], level: str = "medium", rubric=None) -> CardEntry:
    return CardEntry(
        "test-deck",
        Card(
            id=card_id,
            level=level,
            tags=tags,
            front=f"Question {card_id}?",
            back="answer",
            rubric=["optimizer state", "sampler position"] if rubric is None else rubric,
        ),
    )


def tiny_round(auto_advance: bool = True) -> RoundDef:
    return RoundDef.model_validate(
        {
            "round": "tiny",
            "title": "Tiny round",
            "auto_advance": auto_advance,
            "phases": [
                {
                    "id": "one",
                    "title": "Phase one",
                    "minutes": 1,
                    "prompts": [
                        {
                            "id": "restart",
                            "text": "What must survive a restart?",
                            "rubric": ["optimizer state", "sampler position", "RNG state"],
                        }
                    ],
                },
                {
                    "id": "two",
                    "title": "Phase two",
                    "minutes": 2,
                    "picks": [{"tags": ["phase-pushback"], "count": 1}],
                },
            ],
        }
    )


CARDS = [
    card("push-a", ["phase-pushback"], "hard"),
    card("push-b", ["phase-pushback"], "hard"),
    card("other", ["misc"]),
]


def open_store(path):
    """A MockStore over a fresh database at `path`, with a fixed wall clock."""
    from drill.mock.store import MockStore
    from storage.db import open_database

    return MockStore(open_database(path), wall=lambda: FIXED_WALL)
