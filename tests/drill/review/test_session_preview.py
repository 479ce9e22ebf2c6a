"""The review screen's interval preview is what the rating then gives, fuzz included: a session
previews with the card's own fuzz seed and the session's settings."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.session import ReviewSession
from drill.settings import Settings
from drill.times import learner_date
from storage.db import open_database
from tests.support.clocks import Clock


def _session(deck_dir: Path, clock: Clock, settings: Settings) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    return ReviewSession(decks, open_database(database_path()), settings=settings, now=clock)


def _due(card_id: str) -> datetime:
    conn = sqlite3.connect(database_path())
    try:
        query = "SELECT due FROM card_state WHERE card_id = ?"
        (text,) = conn.execute(query, (card_id,)).fetchone()
    finally:
        conn.close()
    return datetime.fromisoformat(text + "+00:00")


def test_the_preview_of_a_review_card_is_the_interval_its_rating_gives(
    deck_dir: Path, clock: Clock
) -> None:
    settings = Settings(day_start_hour=5)
    session = _session(deck_dir, clock, settings)
    graduated = []
    while session.current is not None:  # Easy: every new card graduates to review at once
        graduated.append(session.current.card.id)
        session.rate(4, 1000)
    checked = 0
    for _ in range(4):  # four rounds of reviews, each on the day the first card falls due
        clock.now = min(_due(card_id) for card_id in graduated) + timedelta(hours=7)
        session = _session(deck_dir, clock, settings)
        while session.current is not None:
            card_id = session.current.card.id
            preview = session.preview_intervals()
            session.rate(3, 1000)
            due = _due(card_id)
            today = learner_date(clock.now, settings.day_start_hour)
            assert preview[3] == timedelta(days=(learner_date(due, 5) - today).days)
            checked += 1
    assert checked >= 4
