"""ReviewSession.rate_card: an exercise or lab solved from review rates the cards named, each
once, whatever card the session shows by then (issue 26: the callback used to rate `current`);
a card other than the current one by the rule for ratings from outside review (issue 34)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.outside import RESCHEDULED
from drill.review.session import ReviewSession
from drill.settings import Settings
from storage.db import open_database
from tests.support.clocks import Clock
from tests.support.review_logs import LogBuilder


def session_for(deck_dir: Path, clock: Clock) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    return ReviewSession(decks, open_database(database_path()), settings=Settings(), now=clock)


def log() -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(database_path())
    try:
        sql = "SELECT card_id, rating, duration_ms FROM review_log ORDER BY id"
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def shown_ids(session: ReviewSession) -> list[str]:
    """Every card the session still shows, in order, by rating each Easy (out of the session)."""
    seen = []
    while session.current is not None:
        seen.append(session.current.card.id)
        session.rate(4, 0)
    return seen


def test_rating_named_cards_rates_each_once_and_keeps_the_card_on_screen(
    deck_dir: Path, clock: Clock
) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 100)  # alpha reviewed; beta is on screen
    assert session.current is not None and session.current.card.id == "beta"
    # An exercise linked by gamma (queued, never seen) and beta (on screen), in deck order.
    gamma = session.rate_card("gamma", "basics", 2, 0)
    assert gamma.describe() == "gamma: new, not rated"  # issue 34: never a new card
    assert session.current.card.id == "beta"  # still the card on screen
    beta = session.rate_card("beta", "basics", 2, 5000)
    assert beta.kind == RESCHEDULED and beta.describe().startswith("beta: Hard, due in ")
    assert log() == [("alpha", 4, 100), ("beta", 2, 5000)]
    # gamma is still a new card of this session; beta comes back by its learning step.
    assert session.current is not None and session.current.card.id == "gamma"
    assert session.current.kind == "new"
    clock.now += timedelta(minutes=30)
    assert shown_ids(session) == ["gamma", "beta"]


def test_rating_a_card_after_the_current_one_moved_on_never_rates_a_card_not_named(
    deck_dir: Path, clock: Clock
) -> None:
    session = session_for(deck_dir, clock)
    # alpha is on screen and named, then beta: rating alpha moves the session to beta, but
    # beta is rated because it is named, not because it is current, and gamma never is.
    session.rate_card("alpha", "basics", 3, 1200)
    assert session.current is not None and session.current.card.id == "beta"
    session.rate_card("beta", "basics", 3, 0)
    assert log() == [("alpha", 3, 1200), ("beta", 3, 0)]
    assert session.current is not None and session.current.card.id == "gamma"


def test_a_card_outside_the_session_not_due_is_logged_and_undo_takes_it_back(
    deck_dir: Path, clock: Clock
) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 0)
    session.rate(4, 0)  # alpha and beta reviewed, days ahead: no longer in the session
    before = open_database(database_path()).review.card_state("alpha")
    change = session.rate_card("alpha", "basics", 1, 0)  # Again on a card not due
    assert change.describe() == "alpha: not due, logged only"
    assert open_database(database_path()).review.card_state("alpha")["due"] == before["due"]
    assert session.current is not None and session.current.card.id == "gamma"
    assert session.remaining == 1  # not queued again: its schedule did not move
    assert session.undo() is True  # the logged Again on alpha: alpha is current again
    assert session.current.card.id == "alpha"
    assert [row[:2] for row in log()] == [("alpha", 4), ("beta", 4)]
    assert session.remaining == 2  # alpha (to rate again) and gamma


def test_an_unknown_card_raises_and_writes_nothing(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    with pytest.raises(KeyError):
        session.rate_card("no-such-card", "basics", 3, 0)
    with pytest.raises(ValueError):
        session.rate_card("alpha", "basics", 5, 0)
    assert log() == []
    assert session.current is not None and session.current.card.id == "alpha"


def test_each_leech_of_several_ratings_is_kept_and_named(deck_dir: Path, clock: Clock) -> None:
    log_builder = LogBuilder(database_path())
    for card_id, lapses in (("alpha", 7), ("beta", 0), ("gamma", 7)):  # threshold 8
        log_builder.card(card_id, "basics", due=clock.now - timedelta(days=1), lapses=lapses)
    log_builder.write()
    session = session_for(deck_dir, clock)
    assert session.current is not None and session.current.card.id == "alpha"
    for card_id in ("alpha", "beta", "gamma"):  # what an exercise linked by all three does
        session.rate_card(card_id, "basics", 1)
    assert session.take_notices() == [
        "Leech: alpha lapsed 8 times, suspended",
        "Leech: gamma lapsed 8 times, suspended",
    ]
    assert session.take_notices() == []  # taken once
