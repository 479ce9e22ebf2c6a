"""Custom study: cards by tag / level / deck beyond today's limits; a not-yet-due card's
rating is logged but its schedule is kept."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.review_log import read_review_log
from drill.review.session import ReviewSession
from drill.review.study import StudyFilter, parse_filter
from drill.settings import Settings
from storage.db import open_database
from tests.support.clocks import Clock

DECK = """\
deck: infra
title: Infra
cards:
  - {id: ckpt, level: hard, tags: [checkpoint], front: q1, back: a1}
  - {id: nccl, level: hard, tags: [nccl], front: q2, back: a2}
  - {id: easy-ckpt, level: easy, tags: [checkpoint], front: q3, back: a3}
  - {id: other, level: medium, front: q4, back: a4}
"""


@pytest.fixture
def infra(tmp_path: Path) -> Path:
    directory = tmp_path / "infra"
    directory.mkdir()
    (directory / "infra.yaml").write_text(DECK)
    return directory


def session(
    deck_dir: Path, clock: Clock, study: StudyFilter | None = None, **kw: int
) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    return ReviewSession(decks, open_database(database_path()), settings=Settings(**kw),
                         now=clock, study=study)  # fmt: skip


def schedule(card_id: str) -> tuple:
    conn = sqlite3.connect(database_path())
    try:
        return conn.execute(
            "SELECT state, due, stability, difficulty, reps, lapses FROM card_state "
            "WHERE card_id = ?", (card_id,)
        ).fetchone()  # fmt: skip
    finally:
        conn.close()


def ids(s: ReviewSession) -> list[str]:
    """The session's cards in order (buried one by one, then every bury undone)."""
    seen = []
    while s.current is not None:
        seen.append(s.current.card.id)
        s.bury()
    while s.undo():
        pass
    return seen


def test_filters_pick_by_tag_level_and_deck(infra: Path, clock: Clock) -> None:
    assert ids(session(infra, clock, StudyFilter(tags=("checkpoint",)))) == ["ckpt", "easy-ckpt"]
    assert ids(session(infra, clock, StudyFilter(tags=("nccl", "checkpoint"), level="easy"))) == [
        "easy-ckpt"
    ]
    assert ids(session(infra, clock, StudyFilter(level="hard"))) == ["ckpt", "nccl"]
    assert ids(session(infra, clock, StudyFilter(deck_id="nope"))) == []
    assert ids(session(infra, clock, StudyFilter(deck_id="infra", limit=2))) == ["ckpt", "nccl"]


def test_beyond_the_daily_new_limit(infra: Path, clock: Clock) -> None:
    assert session(infra, clock, new_cards_per_day=0).current is None
    study = session(infra, clock, StudyFilter(level="hard"), new_cards_per_day=0)
    assert study.current is not None and study.current.card.id == "ckpt"


def test_a_not_yet_due_card_is_logged_but_keeps_its_schedule(infra: Path, clock: Clock) -> None:
    normal = session(infra, clock)
    normal.rate(4, 10)  # ckpt -> review, due days ahead
    kept = schedule("ckpt")
    clock.now += timedelta(hours=2)
    study = session(infra, clock, StudyFilter(tags=("checkpoint",)))
    assert study.current.card.id == "ckpt"  # type: ignore[union-attr]
    study.rate(1, 500)  # Again on a card not due: logged, schedule unchanged, back at the end
    assert schedule("ckpt") == kept
    conn = sqlite3.connect(database_path())
    logged = conn.execute("SELECT card_id, rating FROM review_log ORDER BY id").fetchall()
    conn.close()
    assert logged == [("ckpt", 4), ("ckpt", 1)]
    assert study.current.card.id == "easy-ckpt"  # type: ignore[union-attr]
    study.rate(4, 10)  # a new card: rated as in a normal review
    assert schedule("easy-ckpt")[0] == 2
    assert study.current.card.id == "ckpt"  # type: ignore[union-attr]  # the Again, once more
    study.rate(4, 10)
    assert schedule("ckpt") == kept and study.current is None
    assert study.undo() and study.undo() and study.undo()
    assert study.current.card.id == "ckpt" and schedule("ckpt") == kept  # type: ignore[union-attr]


def test_study_ahead_ratings_stay_out_of_the_fsrs_fit_and_csv(infra: Path, clock: Clock) -> None:
    session(infra, clock).rate(4, 10)  # ckpt: a real review
    clock.now += timedelta(hours=2)
    study = session(infra, clock, StudyFilter(tags=("checkpoint",)))
    study.rate(3, 500)  # ckpt, not due: logged, schedule kept
    study.rate(3, 500)  # easy-ckpt, new: a real review
    db = open_database(database_path())
    try:
        fed = [(r.card_id, r.rating) for r in read_review_log(db)]
    finally:
        db.close()
    assert fed == [("ckpt", 4), ("easy-ckpt", 3)]  # what the optimizer and the CSV export read


def test_due_cards_in_study_are_rescheduled(infra: Path, clock: Clock) -> None:
    session(infra, clock).rate(4, 10)
    before = schedule("ckpt")
    clock.now += timedelta(days=400)
    study = session(infra, clock, StudyFilter(tags=("checkpoint",)))
    study.rate(3, 10)
    assert schedule("ckpt")[4] == before[4] + 1  # reps moved on: a normal review


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("", "extreme", "", ""), "level must be one of"),
        (("", "", "", "ten"), "count must be a whole number"),
        (("", "", "", "0"), "count must be between 1 and 1000"),
    ],
)
def test_bad_form_values_are_one_line_errors(fields: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_filter(*fields)


def test_form_values_parse() -> None:
    chosen = parse_filter("checkpoint, nccl", " Hard ", "infra", "")
    assert chosen == StudyFilter(("checkpoint", "nccl"), "hard", "infra", 50)
    assert chosen.describe() == "Custom study · tag checkpoint, nccl · hard · deck infra"
