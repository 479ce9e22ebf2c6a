"""Undo as a stack over every session action (rate, bury, suspend), leeches, the header's
card kind and learn-ahead on reopening."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.scheduler import is_leech_lapse
from drill.review.session import ReviewSession
from drill.settings import Settings
from storage.db import open_database
from storage.snapshot import read_snapshot
from tests.support.clocks import Clock

ONE_CARD = """\
deck: solo
title: Solo
cards:
  - id: lone
    level: hard
    front: What is lone?
    back: The only one.
"""


def session_for(deck_dir: Path, clock: Clock, **settings: int | str) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    return ReviewSession(
        decks, open_database(database_path()), settings=Settings(**settings), now=clock
    )


def rows(sql: str) -> list[tuple]:
    conn = sqlite3.connect(database_path())
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_undo_is_a_stack_over_rate_bury_suspend(tmp_path: Path, clock: Clock) -> None:
    decks = tmp_path / "four"
    decks.mkdir()
    body = "deck: four\ntitle: Four\ncards:\n" + "".join(
        f"  - {{id: c{i}, level: easy, front: q{i}, back: a{i}}}\n" for i in range(5)
    )
    (decks / "four.yaml").write_text(body)
    session = session_for(decks, clock)
    session.rate(4, 10)  # c0
    session.bury()  # c1
    session.suspend()  # c2
    session.rate(4, 10)  # c3
    assert session.current.card.id == "c4"  # type: ignore[union-attr]
    flags = rows(
        "SELECT card_id, suspended, buried_until IS NOT NULL FROM card_state ORDER BY card_id"
    )
    assert flags == [("c0", 0, 0), ("c1", 0, 1), ("c2", 1, 0), ("c3", 0, 0)]
    assert session.last_action == "rate"
    assert session.undo() and session.current.card.id == "c3"  # type: ignore[union-attr]
    assert rows("SELECT card_id FROM review_log") == [("c0",)]
    assert session.last_action == "suspend"
    assert session.undo() and session.current.card.id == "c2"  # type: ignore[union-attr]
    assert rows("SELECT card_id FROM card_state ORDER BY card_id") == [("c0",), ("c1",)]
    assert session.undo() and session.current.card.id == "c1"  # type: ignore[union-attr]
    assert rows("SELECT card_id FROM card_state") == [("c0",)]
    assert session.undo() and session.current.card.id == "c0"  # type: ignore[union-attr]
    assert rows("SELECT COUNT(*) FROM card_state") == [(0,)]
    assert rows("SELECT COUNT(*) FROM review_log") == [(0,)]
    assert session.undo() is False and not session.can_undo
    order = []
    while session.current is not None:  # every card is back in the queue, in order
        order.append(session.current.card.id)
        session.bury()
    assert order == ["c0", "c1", "c2", "c3", "c4"]


def test_undo_suspend_of_a_reviewed_card_keeps_its_schedule(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 10)  # alpha -> review
    clock.now += timedelta(days=400)
    later = session_for(deck_dir, clock)
    assert later.current.card.id == "alpha"  # type: ignore[union-attr]
    before = rows("SELECT state, due, reps, suspended FROM card_state WHERE card_id='alpha'")
    later.suspend()
    assert later.undo() and later.current.card.id == "alpha"  # type: ignore[union-attr]
    assert rows("SELECT state, due, reps, suspended FROM card_state "
                "WHERE card_id='alpha'") == before  # fmt: skip


def _lapse(deck_dir: Path, clock: Clock, **settings: int | str) -> ReviewSession:
    """One more lapse of `lone`: due a long time later, rated Again."""
    clock.now += timedelta(days=3000)
    session = session_for(deck_dir, clock, **settings)
    assert session.current is not None and session.current.kind == "review"
    session.rate(1, 10)
    return session


def test_a_card_lapsing_threshold_times_is_a_suspended_leech(tmp_path: Path, clock: Clock) -> None:
    deck_dir = tmp_path / "solo"
    deck_dir.mkdir()
    (deck_dir / "solo.yaml").write_text(ONE_CARD)
    first = session_for(deck_dir, clock)
    first.rate(4, 10)
    session = _lapse(deck_dir, clock, leech_threshold=2)
    assert session.leech_notice is None
    assert session.current is not None and session.current.kind == "relearning"
    session.rate(4, 10)  # back to review
    session = _lapse(deck_dir, clock, leech_threshold=2)
    assert session.leech_notice == "Leech: lone lapsed 2 times, suspended"
    assert session.current is None  # suspended: not a learning card of this session
    assert rows("SELECT leech, suspended, lapses FROM card_state") == [(1, 1, 2)]
    snapshot = read_snapshot(database_path())
    assert snapshot is not None and snapshot.schedules["lone"].leech is True
    assert session.undo()  # the rating and its leech flag go together
    assert rows("SELECT leech, suspended, lapses FROM card_state") == [(0, 0, 1)]


def test_leech_action_tag_keeps_the_card_in_review(tmp_path: Path, clock: Clock) -> None:
    deck_dir = tmp_path / "solo"
    deck_dir.mkdir()
    (deck_dir / "solo.yaml").write_text(ONE_CARD)
    session_for(deck_dir, clock).rate(4, 10)
    session = _lapse(deck_dir, clock, leech_threshold=1, leech_action="tag")
    assert session.leech_notice == "Leech: lone lapsed 1 times, tagged leech"
    assert session.current is not None  # the relearning step stays in this session
    assert rows("SELECT leech, suspended FROM card_state") == [(1, 0)]


def test_leech_lapses_follow_ankis_rule() -> None:
    hits = [n for n in range(1, 20) if is_leech_lapse(n, 8)]
    assert hits == [8, 12, 16]
    assert not any(is_leech_lapse(n, 0) for n in range(50))


def test_reopening_offers_learning_cards_within_learn_ahead(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(1, 10)  # alpha: Again -> due in a few minutes
    session.rate(3, 10)  # beta: Good -> a learning step ~10 min away
    due = dict(rows("SELECT card_id, due FROM card_state"))
    assert len(due) == 2
    narrow = session_for(deck_dir, clock, learn_ahead_minutes=0)
    assert narrow.current.card.id == "gamma" and narrow.remaining == 1  # type: ignore[union-attr]
    reopened = session_for(deck_dir, clock)  # same moment: nothing due yet
    assert reopened.remaining == 3
    seen = []
    while reopened.current is not None and len(seen) < 3:
        seen.append(reopened.current.card.id)
        reopened.bury()
    assert seen == ["gamma", "alpha", "beta"]  # new first, then learn-ahead (soonest first)
