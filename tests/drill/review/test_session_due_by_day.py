"""A review card is due for its whole learner day, also in a session (issue 26): a row stored
before review cards became due by day (due later today, at a time) is an ordinary due card,
shown with the other due cards before new ones, never held back as a learning card."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.session import ReviewSession
from drill.settings import Settings
from storage.db import open_database
from tests.support.clocks import Clock
from tests.support.review_logs import LogBuilder


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The learner's day starts at 04:00 local: UTC here, so the test knows where it ends."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def session_for(deck_dir: Path, clock: Clock) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    return ReviewSession(decks, open_database(database_path()), settings=Settings(), now=clock)


def test_a_review_card_due_later_today_is_shown_as_due(deck_dir: Path, clock: Clock) -> None:
    # clock: 12:00 UTC; the learner day runs 04:00 .. 04:00 tomorrow.
    log = LogBuilder(database_path())
    log.card("beta", "basics", state=2, due=clock.now + timedelta(hours=8))  # 20:00 today
    log.write()
    session = session_for(deck_dir, clock)
    current = session.current
    assert current is not None and current.card.id == "beta" and current.kind == "review"
    session.rate(3, 1000)
    assert session.current is not None and session.current.card.id == "alpha"  # then new ones


def test_a_learning_card_due_later_today_waits_for_its_time(deck_dir: Path, clock: Clock) -> None:
    log = LogBuilder(database_path())
    log.card("beta", "basics", state=1, due=clock.now + timedelta(minutes=5))  # learn-ahead
    log.write()
    session = session_for(deck_dir, clock)
    assert session.current is not None and session.current.card.id == "alpha"
    assert session.remaining == 3


def test_a_review_card_due_tomorrow_is_not_shown(deck_dir: Path, clock: Clock) -> None:
    log = LogBuilder(database_path())
    log.card("beta", "basics", state=2, due=clock.now + timedelta(hours=16, minutes=1))
    log.write()
    session = session_for(deck_dir, clock)
    assert session.remaining == 2  # alpha and gamma, new
