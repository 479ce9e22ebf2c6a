"""Shared builders for mock-round tests."""

from __future__ import annotations

from datetime import UTC, datetime

from drill.decks.models import Card
from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.mock.models import RoundDef
from drill.mock.selection import CardEntry
from trainer_lab.grading import LAB
from trainer_lab.result import new_result, write_result

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


def write_grade(session: CodingSession, number: int, checks: list[tuple[str, bool]]) -> None:
    """A grading of a coding round, as `grade` leaves it: grades/<number>/result.json."""
    folder = session.folder / "grades" / str(number)
    result = new_result(LAB, {}, 1, folder)
    result["status"] = "ok" if all(p for _, p in checks) else "failed"
    result["checks"] = [{"name": n, "passed": p, "detail": "seen"} for n, p in checks]
    write_result(folder, result)


def coding_rounds() -> tuple[CodingSession, CodingSession]:
    """In DRILL_HOME/rounds: #1 a finished coding round whose latest gradings hold 2 of 3
    checks, #2 an unfinished, ungraded notebook round."""
    done = CodingSession.create(default_rounds_dir())
    write_grade(done, 1, [("skeleton.exits", False), ("skeleton.loss_falls", True)])
    write_grade(done, 2, [("skeleton.exits", True), ("distributed.exactly_once", False)])
    done.clock.start()
    done.clock.finish()
    done.save()
    notebook = CodingSession.create(default_rounds_dir(), notebook=True)
    return done, notebook


def recording_rater(rated: list[tuple[str, str, int]]):
    """A mock round's rater that records its calls and leaves every card new."""
    from drill.review.outside import NEW, CardChange

    def rate(card_id: str, deck_id: str, rating: int) -> CardChange:
        rated.append((card_id, deck_id, rating))
        return CardChange(card_id, rating, NEW)

    return rate
