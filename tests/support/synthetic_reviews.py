"""Synthetic review logs for the optimizer and export tests and benchmarks/fsrs_optimize.py: a
simulated learner whose recall follows FSRS-6 with known "true" parameters (py-fsrs schedules,
recall is drawn with the true retrievability at the review time), so a fit has something real
to recover. Deterministic for a given seed."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fsrs import Card, Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.review.review_log import LoggedReview
from storage.db import open_database
from storage.schema_names import REVIEW_LOG

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores datetimes on SQLite (UTC, no offset)


def true_parameters() -> tuple[float, ...]:
    """A learner who forgets faster than the defaults assume (lower initial stabilities)."""
    values = list(DEFAULT_PARAMETERS)
    values[0:4] = [0.1, 0.5, 1.2, 4.0]
    values[8] = 1.3
    return tuple(values)


def synthetic_reviews(count: int, *, seed: int = 7, cards: int | None = None) -> list[LoggedReview]:
    """`count` reviews over `cards` cards (default count // 10), oldest first."""
    rng = random.Random(seed)
    truth = Scheduler(parameters=true_parameters(), enable_fuzzing=False)
    shown = Scheduler(enable_fuzzing=False)  # what schedules the cards: the defaults
    n_cards = cards or max(1, count // 10)
    per_card = [count // n_cards + (1 if i < count % n_cards else 0) for i in range(n_cards)]
    reviews: list[LoggedReview] = []
    for index, quota in enumerate(per_card):
        card_id = f"card-{index:06d}"
        card, hidden = Card(card_id=index, due=START), Card(card_id=index, due=START)
        now = START + timedelta(minutes=rng.randrange(0, 60 * 24 * 30))
        for _ in range(quota):
            recall = truth.get_card_retrievability(hidden, now) if hidden.last_review else 0.0
            first = hidden.last_review is None
            if first:
                rating = rng.choices([1, 2, 3, 4], weights=[25, 10, 55, 10])[0]
            elif rng.random() < recall:
                rating = rng.choices([2, 3, 4], weights=[15, 75, 10])[0]
            else:
                rating = 1
            state = 0 if first else int(card.state)
            reviews.append(LoggedReview(card_id, now, rating, state, rng.randrange(2000, 20000)))
            card, _ = shown.review_card(card, Rating(rating), now)
            hidden, _ = truth.review_card(hidden, Rating(rating), now)
            now = max(card.due, now + timedelta(minutes=1))
    reviews.sort(key=lambda r: r.reviewed_at)
    return reviews


def write_review_log(db_path: Path, reviews: list[LoggedReview], deck_id: str = "basics") -> Path:
    """Store `reviews` in the app's database at `db_path` (created by the app's own migrations)."""
    open_database(db_path).close()
    rows = [
        (r.card_id, deck_id, r.rating, r.reviewed_at.astimezone(UTC).strftime(FORMAT),
         r.duration_ms, None if r.state == 0 else json.dumps({"state": r.state}), "{}")
        for r in reviews
    ]  # fmt: skip
    conn = sqlite3.connect(db_path)
    with conn:
        conn.executemany(
            f"INSERT INTO {REVIEW_LOG} (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_before, state_after) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    conn.close()
    return db_path
