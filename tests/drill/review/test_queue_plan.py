"""The review queue under an interview plan (issue 33), with a fixed clock: the day's new cards
are the plan's quota in the role's order, cards the plan moves are due in the queue, and home,
`drill due --json` and the stats' "due today" count them by one rule. After the date the
queue is plain FSRS again."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.decks.loader import DeckSet, load_decks
from drill.mock.coding.past import stats_with_rounds
from drill.paths import database_path
from drill.review.due import first_paint
from drill.review.queue import planned_review_day, queue_for
from drill.settings import Settings
from storage.db import open_database
from storage.snapshot import read_snapshot
from tests.support.review_logs import LogBuilder

INTERVIEW = date(2026, 3, 12)  # final window 03-09 .. 03-11; last introduction day 03-08


def deck_text(deck_id: str, prefix: str, count: int) -> str:
    cards = "".join(
        f"  - id: {prefix}{i}\n    level: easy\n    front: Q {prefix}{i}?\n    back: A.\n"
        for i in range(count)
    )
    return f"deck: {deck_id}\ntitle: {deck_id}\ncards:\n{cards}"


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Learner days start at 04:00 local: UTC here, so the test knows where days end."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def role_decks(tmp_path: Path) -> Path:
    """biotech first in deck order (the role's lowest value), then llm-scale (its highest)."""
    directory = tmp_path / "role-decks"
    directory.mkdir()
    (directory / "a-biotech.yaml").write_text(deck_text("biotech", "b", 6))
    (directory / "b-llm-scale.yaml").write_text(deck_text("llm-scale", "l", 6))
    return directory


def load(directory: Path) -> DeckSet:
    return load_decks([directory], include_bundled=False)


def record_plan(at: datetime, minutes: int = 45) -> None:
    db = open_database(database_path())
    try:
        db.plans.record(INTERVIEW, "training-infra", minutes, 0.9, at)
    finally:
        db.close()


def noon(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)


def test_new_cards_follow_the_plans_quota_and_the_roles_order(role_decks: Path) -> None:
    now = noon(date(2026, 3, 2))  # 7 introduction days (03-02 .. 03-08) for 12 cards
    decks = load(role_decks)
    open_database(database_path()).close()
    plain = first_paint(index=decks.index, now=now, settings=Settings(), include_bundled=False)
    assert plain is not None
    assert [e.card_id for e in plain.queue][:2] == ["b0", "b1"]  # deck order, 20 a day
    assert plain.totals["new"] == 12
    record_plan(now - timedelta(hours=1))
    paint = first_paint(index=decks.index, now=now, settings=Settings(), include_bundled=False)
    assert paint is not None and paint.plan is not None and paint.deadline is not None
    # twice the even pace, ceil(12 / 7) = 2, while the budget has room; llm-scale first
    assert [e.card_id for e in paint.queue] == ["l0", "l1", "l2", "l3"]
    assert paint.totals["new"] == 4
    assert {s.deck_id: s.new for s in paint.summaries} == {"biotech": 0, "llm-scale": 4}


def test_a_small_budget_caps_the_days_new_cards(role_decks: Path) -> None:
    now = noon(date(2026, 3, 2))
    log = LogBuilder(database_path())
    # five reviews due today; no answer measured yet, so the day is priced at 25 s an answer
    # (UNMEASURED_SECONDS_PER_REVIEW): 5 x 1.25 answers x 25 s = 156 s
    for i in range(5):
        log.card(f"b{i}", "biotech", due=now - timedelta(hours=2), interval_days=3)
    log.write()
    record_plan(now - timedelta(hours=1), minutes=5)
    decks = load(role_decks)
    paint = first_paint(index=decks.index, now=now, settings=Settings(), include_bundled=False)
    assert paint is not None
    # of the 255 s the plan fills (0.85 of a 5-minute budget) 99 s are left: one new card
    # of 75 s, where twice the pace would give 2
    assert paint.totals == {"due": 5, "new": 1}
    assert [e.card_id for e in paint.queue if e.is_new] == ["l0"]


def plan_moves_cards(now: datetime) -> tuple[DeckSet, list[str], str]:
    """Six llm-scale review cards of the bundled decks, last seen 03-01 and due by FSRS on
    04-01: the final pass spreads them over 03-09 .. 03-11; one biotech card is due today by
    FSRS. Returns the decks, the six and the biotech card."""
    decks = load_decks([], include_bundled=True)
    ids = {o.deck_id: o.card_ids for o in decks.outline()}
    six, biotech = list(ids["llm-scale"][:6]), ids["biotech"][0]
    due_later = datetime(2026, 4, 1, 4, tzinfo=UTC)
    log = LogBuilder(database_path())
    for card_id in six:
        log.card(card_id, "llm-scale", due=due_later, interval_days=31)
    log.card(biotech, "biotech", due=now - timedelta(hours=3), interval_days=4)
    log.write()
    # a budget that introduces every bundled card, so the final pass holds (with cards left
    # out the plan gives the pass up for new cards: deadline.fitted_to_budget)
    record_plan(datetime(2026, 3, 1, 12, tzinfo=UTC), minutes=600)
    return decks, six, biotech


def test_home_drill_due_and_stats_count_due_by_one_rule(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    now = noon(date(2026, 3, 10))  # in the window: the cards of 03-09 and 03-10 are due
    decks, _six, _biotech = plan_moves_cards(now)
    settings = Settings()
    paint = first_paint(index=decks.index, now=now, settings=settings)
    assert paint is not None
    home = paint.totals["due"]
    assert home == 1 + 4  # biotech by FSRS; 2 + 2 of the six by the final pass (03-09, 03-10)
    monkeypatch.setattr("drill.times.utc_now", lambda: now)
    assert main(["due", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    by_deck = {d["deck"]: d["due"] for d in printed["decks"]}
    assert printed["totals"]["due"] == home
    assert by_deck["llm-scale"] == 4 and by_deck["biotech"] == 1
    stats = stats_with_rounds(decks, database_path(), settings, now)
    assert stats.due_today == home == stats.to_json()["due_today"]
    assert stats.forecast[:2] == [5, 2]  # the last window day tomorrow; nothing after it
    assert sum(stats.forecast) == 7


def test_after_the_date_the_queue_is_plain_fsrs_again() -> None:
    now = noon(INTERVIEW)
    decks, six, biotech = plan_moves_cards(now)
    snapshot = read_snapshot(database_path())
    assert snapshot is not None and snapshot.plan is not None
    day = planned_review_day(now, Settings(), snapshot, decks.index)
    assert day.deadline is None and day.new_limit == Settings().new_cards_per_day
    assert day.planned(snapshot.schedules, now) is snapshot.schedules
    queue = queue_for(decks.outline(), snapshot.schedules, now, day)
    assert [e.card_id for e in queue if not e.is_new] == [biotech]  # the six wait for 04-01
    fresh = [c for o in decks.outline() for c in o.card_ids if c not in (*six, biotech)]
    assert [e.card_id for e in queue if e.is_new] == fresh[:20]  # deck order, 20 a day
