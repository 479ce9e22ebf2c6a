"""The exercise service without real runs: workspace, hints, locked solution, status from stored
attempts, and the linked card's rating on the first solve (Good / Hard / Again)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from drill.decks.loader import load_decks
from drill.exercises.progress import Progress
from drill.exercises.service import (
    AGAIN,
    GOOD,
    HARD,
    ExerciseError,
    ExerciseService,
    rating_for,
)
from drill.times import utc_now
from storage.db import open_database
from tests.support.decks import write_deck
from tests.support.review_logs import LogBuilder
from trainer_lab.exercises.catalogue import get_exercise

DECK = """deck: ex
title: Exercises
cards:
  - id: allreduce-card
    level: easy
    front: How does DDP average gradients?
    back: all-reduce, then divide.
    exercise: ddp-by-hand
  - id: never-seen-card
    level: easy
    front: Why divide by the world size?
    back: all-reduce sums.
    exercise: ddp-by-hand
  - id: ahead-card
    level: easy
    front: What does all-reduce leave on every rank?
    back: the same sum.
    exercise: ddp-by-hand
"""


def _result(status: str, tmp_path: Path) -> dict[str, Any]:
    passed = status == "ok"
    return {"status": status, "duration_s": 1.0, "out_dir": str(tmp_path),
            "checks": [{"name": "params_in_sync", "passed": passed, "detail": "x"}]}  # fmt: skip


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ExerciseService:
    decks = load_decks([write_deck(tmp_path / "decks", DECK)], include_bundled=False)
    seeded = LogBuilder(tmp_path / "db.sqlite3")  # relative to the real clock, days apart
    seeded.card("allreduce-card", "ex", due=utc_now() - timedelta(days=2), interval_days=10)
    seeded.card("ahead-card", "ex", due=utc_now() + timedelta(days=20), interval_days=30)
    seeded.write()
    svc = ExerciseService(open_database(tmp_path / "db.sqlite3"), tmp_path / "ex", decks)
    outcomes: list[str] = []

    def fake_check(spec, path, out_dir, cancel=None):  # the real runner is tested in trainer_lab
        return _result(outcomes.pop(0), out_dir)

    monkeypatch.setattr("trainer_lab.exercises.runner.check_exercise", fake_check)
    svc.outcomes = outcomes  # type: ignore[attr-defined]
    return svc


def test_start_copies_the_starter_once_and_keeps_edits(service: ExerciseService) -> None:
    path, created = service.start("ddp-by-hand")
    assert created and path == service.home / "ddp-by-hand" / "sync.py"
    assert path.read_text() == get_exercise("ddp-by-hand").starter_path.read_text()
    path.write_text("# mine\n")
    assert service.start("ddp-by-hand") == (path, False)
    assert path.read_text() == "# mine\n"
    assert service.info("ddp-by-hand").status == "started"


def test_unknown_and_not_started_are_usage_errors(service: ExerciseService) -> None:
    with pytest.raises(ExerciseError, match="unknown exercise 'nope'"):
        service.start("nope")
    with pytest.raises(ExerciseError, match="not started: drill exercise start ddp-by-hand"):
        service.check("ddp-by-hand")


def test_hints_come_one_at_a_time_and_stop_at_the_last(service: ExerciseService) -> None:
    hints = get_exercise("ddp-by-hand").hints
    shown = [service.next_hint("ddp-by-hand") for _ in range(len(hints) + 1)]
    assert shown == [*[(i + 1, h) for i, h in enumerate(hints)], (len(hints), hints[-1])]
    assert service.progress("ddp-by-hand").hints_shown == len(hints)


def test_the_solution_opens_after_a_check_and_diffs_against_the_file(
    service: ExerciseService,
) -> None:
    service.start("ddp-by-hand")
    with pytest.raises(ExerciseError, match="opens after a check"):
        service.solution("ddp-by-hand")
    service.outcomes.append("failed")  # type: ignore[attr-defined]
    assert service.check("ddp-by-hand").solved is False
    assert service.info("ddp-by-hand").status == "failing"
    diff = service.solution("ddp-by-hand", diff=True)
    assert diff.startswith("--- yours/sync.py\n+++ solution/sync.py\n")
    assert "+            p.grad /= world" in diff
    assert service.progress("ddp-by-hand").solution_viewed


def test_a_first_try_solve_rates_the_linked_card_good_once(service: ExerciseService) -> None:
    service.start("ddp-by-hand")
    service.outcomes += ["ok", "ok"]  # type: ignore[attr-defined]
    outcome = service.check("ddp-by-hand")
    assert outcome.solved and outcome.rating == GOOD
    assert outcome.rated_cards == ["allreduce-card", "ahead-card"]
    assert [r.rating for r in service.db.review.reviews("allreduce-card")] == [GOOD]
    again = service.check("ddp-by-hand")  # solved already: no second rating
    assert again.rating is None and len(service.db.review.reviews("allreduce-card")) == 1
    assert service.info("ddp-by-hand").status == "solved"
    assert [a.status for a in service.store.attempts("ddp-by-hand")] == ["ok", "ok"]


def test_a_solve_rates_only_due_cards_logs_cards_not_due_and_never_a_new_card(
    service: ExerciseService,
) -> None:
    # issue 34: solving an exercise rated never-seen cards past the day's new-card limit
    ahead_before = service.db.review.card_state("ahead-card")
    service.start("ddp-by-hand")
    service.outcomes += ["ok"]  # type: ignore[attr-defined]
    outcome = service.check("ddp-by-hand")
    lines = [change.describe() for change in outcome.changes]
    assert lines[0].startswith("allreduce-card: Good, due in ") and lines[0].endswith(" d")
    assert lines[1:] == ["never-seen-card: new, not rated", "ahead-card: not due, logged only"]
    assert service.db.review.card_state("never-seen-card") is None
    assert service.db.review.reviews("never-seen-card") == []
    assert service.db.review.card_state("ahead-card")["due"] == ahead_before["due"]
    assert [r.rating for r in service.db.review.reviews("ahead-card")] == [GOOD]


def test_the_rating_follows_hints_failures_and_the_solution() -> None:
    assert rating_for(Progress("x")) == GOOD
    assert rating_for(Progress("x", hints_shown=1)) == HARD
    assert rating_for(Progress("x", attempts=2)) == HARD
    assert rating_for(Progress("x", attempts=1, hints_shown=3, solution_viewed=True)) == AGAIN


def test_a_solve_after_viewing_the_solution_rates_again(service: ExerciseService) -> None:
    service.start("ddp-by-hand")
    service.outcomes += ["failed", "ok"]  # type: ignore[attr-defined]
    service.check("ddp-by-hand")
    service.solution("ddp-by-hand")
    assert service.check("ddp-by-hand").rating == AGAIN
    assert [r.rating for r in service.db.review.reviews("allreduce-card")] == [AGAIN]
