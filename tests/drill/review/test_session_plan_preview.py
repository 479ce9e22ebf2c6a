"""Under an interview plan the interval beside each rating is what that rating gives in the
queue (the plan's final pass and peak on the day included), and undo restores the card exactly
(issue 33). Across the spring DST change in Berlin as in UTC."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.queue import planned_review_day
from drill.review.scheduler import make_scheduler, preview_intervals
from drill.review.session import ReviewSession
from drill.settings import Settings
from drill.times import learner_date, start_of
from storage.db import open_database
from storage.snapshot import read_snapshot
from tests.support.clocks import Clock
from tests.support.review_logs import LogBuilder

INTERVIEW = date(2026, 3, 31)  # final window 03-28 .. 03-30: across the change in Berlin
DECK = """\
deck: llm-scale
title: LLM scale
cards:
  - id: fsdp
    level: hard
    front: What does FSDP shard?
    back: Parameters, gradients and optimizer state.
  - id: other
    level: easy
    front: Other?
    back: Yes.
"""


@pytest.fixture(params=["UTC", "Europe/Berlin"])
def local_zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def local(day: date, hour: int) -> datetime:
    """`hour`:00 local time on `day`, as aware UTC."""
    return start_of(day, hour).astimezone(UTC)


# (clock day, the card's last review day, its FSRS due day, stability, the plan's target
# recall): before the window the final pass moves a Good into the window; in it, a weak card
# that FSRS (aiming at 0.9 recall) brings back after the date, with recall on the date below
# the target of 0.95, comes on the date's eve instead.
CASES = {
    "final pass": (date(2026, 3, 25), date(2026, 3, 20), date(2026, 3, 25), 5.0, 0.9),
    "peak on the day": (date(2026, 3, 29), date(2026, 3, 28), date(2026, 3, 29), 0.5, 0.95),
}


@pytest.mark.usefixtures("local_zone")
@pytest.mark.parametrize("case", CASES)
def test_each_preview_is_the_due_the_rating_gives_in_the_queue(tmp_path: Path, case: str) -> None:
    today, last, due, stability, target = CASES[case]
    deck_dir = tmp_path / "decks"
    deck_dir.mkdir()
    (deck_dir / "llm.yaml").write_text(DECK)
    log = LogBuilder(database_path())
    log.card("fsdp", "llm-scale", due=local(due, 4), interval_days=(due - last).days)
    log.write()
    with sqlite3.connect(database_path()) as conn:
        conn.execute("UPDATE card_state SET stability = ? WHERE card_id = 'fsdp'", (stability,))
    db = open_database(database_path())
    db.plans.record(INTERVIEW, "training-infra", 45, target, local(last, 10))
    decks = load_decks([deck_dir], include_bundled=False)
    settings = Settings()
    clock = Clock(local(today, 10))
    before = db.review.card_state("fsdp")
    moved = 0
    for rating in (1, 2, 3, 4):
        session = ReviewSession(decks, db, settings=settings, now=clock)
        assert session.current is not None and session.current.card.id == "fsdp"
        preview = session.preview_intervals()
        plain = preview_intervals(make_scheduler(settings), before, clock.now, settings,
                                  card_id="fsdp")  # fmt: skip
        session.rate(rating, 3000)
        snapshot = read_snapshot(database_path())
        assert snapshot is not None
        day = planned_review_day(clock.now, settings, snapshot, decks.index)
        row = day.planned(snapshot.schedules, clock.now)["fsdp"]
        assert row.due is not None
        if row.state == 2:
            days = (learner_date(row.due, 4) - learner_date(clock.now, 4)).days
            assert preview[rating] == timedelta(days=days), (case, rating)
        else:
            assert preview[rating] == row.due - clock.now, (case, rating)
        moved += preview[rating] != plain[rating]
        assert session.undo()
        assert db.review.card_state("fsdp") == before  # undo restores exactly
        assert session.preview_intervals() == preview  # and the preview with it
    assert moved >= 1  # the plan did move this card (else the test shows nothing)
    db.close()
