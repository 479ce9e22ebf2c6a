"""The stats service over hand-built review logs whose figures are known."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.review.stats import CardInfo, calibration_verdict, compute_stats
from storage.schema_names import RUN_LOG
from tests.support.review_logs import LogBuilder

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # a Friday
TODAY = date(2026, 11, 20)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def stats_of(path: Path, cards: list[CardInfo], **kw: object):  # type: ignore[no-untyped-def]
    return compute_stats(path, cards, NOW, day_start_hour=0, **kw)  # type: ignore[arg-type]


CARDS = [
    CardInfo("a1", "alpha", ("fsdp", "memory")),
    CardInfo("a2", "alpha", ("fsdp",)),
    CardInfo("b1", "beta", ("resume",)),
    CardInfo("b2", "beta", ()),
    CardInfo("b3", "beta", ()),
]


def test_empty_database_is_a_first_day(tmp_path: Path) -> None:
    stats = stats_of(tmp_path / "none.sqlite3", CARDS)
    assert stats.counts == {"new": 5, "learning": 0, "young": 0, "mature": 0, "suspended": 0}
    assert stats.streak == 0 and stats.reviews_total == 0 and stats.reviews_today == 0
    assert stats.retention.rate is None
    assert stats.forecast == [0] * 30
    assert len(stats.heatmap) == 365 and stats.heatmap[-1] == (TODAY, 0)
    assert stats.weakest_tags == [] and stats.mock_results == []
    assert stats.calibration_verdict.startswith("not enough")
    data = stats.to_json()
    assert data["retention"]["rate"] is None and data["reviews_per_day"] == {}
    # a freshly migrated, empty file reads the same
    assert stats_of(LogBuilder(tmp_path / "db.sqlite3").write(), CARDS).counts["new"] == 5


def test_true_retention_counts_only_mature_reviews(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    at = NOW - timedelta(hours=1)
    for i in range(10):  # alpha: 10 mature reviews, 2 rated Again
        log.review("a1", "alpha", at - timedelta(days=i), 1 if i < 2 else 3, 30.0)
    for i in range(4):  # beta: 4 mature reviews (exactly 21 days counts), none Again
        log.review("b1", "beta", at - timedelta(days=i), 4, 21.0)
    log.review("b1", "beta", at, 1, 5.0)  # young: not in true retention
    log.review("b2", "beta", at, 1, None)  # a new card's first review: not either
    stats = stats_of(log.write(), CARDS)
    assert stats.retention.reviews == 14 and stats.retention.again == 2
    assert stats.retention.rate == pytest.approx(12 / 14)
    assert stats.retention_by_deck["alpha"].rate == pytest.approx(0.8)
    assert stats.retention_by_deck["beta"].rate == 1.0
    assert stats.reviews_total == 16
    assert stats.reviews_today == 4  # a1, b1 (three times: 21-day, young, b2's first)
    weeks = dict(stats.retention_by_week)
    monday = date(2026, 11, 16)
    # this week (Mon 16 .. Fri 20): a1 days 0-4 (2 Again), b1 days 0-3
    assert weeks[monday].reviews == 9 and weeks[monday].again == 2
    assert weeks[monday - timedelta(days=7)].reviews == 5
    assert stats.desired_retention == 0.9


def test_streak_counts_back_from_today_or_yesterday(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    for days_ago in (0, 1, 2, 4):
        log.review("a1", "alpha", NOW - timedelta(days=days_ago), 3, 2.0)
    assert stats_of(log.write(), CARDS).streak == 3

    log = LogBuilder(tmp_path / "db2.sqlite3")
    for days_ago in (1, 2):  # nothing yet today: the streak is still alive
        log.review("a1", "alpha", NOW - timedelta(days=days_ago), 3, 2.0)
    stats = stats_of(log.write(), CARDS)
    assert stats.streak == 2
    assert dict(stats.heatmap)[TODAY - timedelta(days=1)] == 1


def test_counts_by_state_and_due_forecast(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("a1", "alpha", state=1, due=NOW - timedelta(days=2), interval_days=0.1)  # learning
    log.card("a2", "alpha", due=NOW + timedelta(days=3), interval_days=5)  # young
    log.card("b1", "beta", due=NOW + timedelta(days=40), interval_days=30)  # mature, beyond 30d
    log.card("b2", "beta", due=NOW + timedelta(days=1), interval_days=30, suspended=True)
    log.card("unknown", "gone", due=NOW, interval_days=3)  # not in any deck: ignored
    stats = stats_of(log.write(), CARDS)
    assert stats.counts == {"new": 1, "learning": 1, "young": 1, "mature": 1, "suspended": 1}
    expected = [0] * 30
    expected[0] = 1  # the overdue learning card
    expected[3] = 1
    assert stats.forecast == expected


def test_weakest_tags_and_decks_most_lapses_first(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("a1", "alpha", due=NOW, lapses=3)
    log.card("a2", "alpha", due=NOW, lapses=1)
    log.card("b1", "beta", due=NOW, lapses=2)
    log.review("b1", "beta", NOW - timedelta(days=1), 1, 30.0)
    log.review("b1", "beta", NOW - timedelta(days=2), 3, 30.0)
    stats = stats_of(log.write(), CARDS)
    assert [(w.name, w.lapses) for w in stats.weakest_tags] == [
        ("fsdp", 4),
        ("memory", 3),
        ("resume", 2),
    ]
    assert stats.weakest_tags[2].retention == 0.5
    assert [(w.name, w.lapses, w.cards) for w in stats.weakest_decks] == [
        ("alpha", 4, 2),
        ("beta", 2, 3),
    ]


def test_calibration_by_certainty_and_mock_results(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    for i in range(10):
        log.lab("high", i < 5, NOW)  # sure, but right only half the time
    for i in range(6):
        log.lab("low", i < 3, NOW)
    log.mock(NOW - timedelta(days=3), "standard", 0.5, "developing")
    log.mock(NOW - timedelta(days=10), "quick", 0.9, "strong")
    stats = stats_of(log.write(), CARDS)
    by_level = {c.certainty: c for c in stats.calibration}
    assert (by_level["high"].predictions, by_level["high"].accuracy) == (10, 0.5)
    assert by_level["medium"].predictions == 0 and by_level["medium"].accuracy is None
    assert stats.calibration_verdict == "over-confident at high certainty"
    assert [(m.round, m.score) for m in stats.mock_results] == [("quick", 0.9), ("standard", 0.5)]


def test_exercise_checks_over_time(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.exercise(NOW - timedelta(days=2), "ddp-by-hand", "failed", 3, 5)
    log.exercise(NOW - timedelta(days=1), "ddp-by-hand", "ok", 5, 5)
    log.exercise(NOW - timedelta(days=3), "resumable-sampler", "failed", 0, 4)
    stats = stats_of(log.write(), CARDS)
    assert [(e.name, e.passed, e.solved) for e in stats.exercise_results] == [
        ("resumable-sampler", 0, False),
        ("ddp-by-hand", 3, False),
        ("ddp-by-hand", 5, True),
    ]
    assert stats.exercises_solved == ["ddp-by-hand"]
    data = stats.to_json()
    assert data["exercises_solved"] == ["ddp-by-hand"]
    assert data["exercise_results"][-1]["solved"] is True


def test_an_exercise_row_with_text_for_numbers_is_skipped(tmp_path: Path) -> None:
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.exercise(NOW - timedelta(days=1), "ddp-by-hand", "ok", 5, 5)
    log.exercise(NOW - timedelta(days=2), "first-nan", "failed", 0, 1)
    path = log.write()
    with sqlite3.connect(path) as conn:  # hand-edited: INTEGER affinity keeps text as text
        conn.execute(f"UPDATE {RUN_LOG} SET checks_passed = 'lots' WHERE name = 'first-nan'")
    assert [e.name for e in stats_of(path, CARDS).exercise_results] == ["ddp-by-hand"]


def test_a_database_without_the_run_log_has_no_exercise_results(tmp_path: Path) -> None:
    path = LogBuilder(tmp_path / "db.sqlite3").write()
    with sqlite3.connect(path) as conn:
        conn.execute(f"DROP TABLE {RUN_LOG}")
    assert stats_of(path, CARDS).exercise_results == []


@pytest.mark.parametrize(
    ("rows", "verdict"),
    [
        ([("high", 10, 9), ("medium", 10, 7)], "calibrated"),
        ([("high", 10, 6)], "over-confident at high certainty"),
        ([("medium", 5, 2), ("high", 5, 5)], "over-confident at medium certainty"),
        ([("low", 10, 9)], "under-confident"),
        ([("high", 4, 0)], "not enough"),
    ],
)
def test_calibration_verdict(rows: list[tuple[str, int, int]], verdict: str) -> None:
    assert calibration_verdict(rows).startswith(verdict)


def test_unreadable_file_is_a_database_error(tmp_path: Path) -> None:
    from storage.errors import DatabaseError

    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DatabaseError, match="cannot read the database"):
        stats_of(bad, CARDS)


def test_totals_follow_new_and_undone_reviews(tmp_path: Path) -> None:
    import sqlite3

    log = LogBuilder(tmp_path / "db.sqlite3")
    log.review("a1", "alpha", NOW - timedelta(days=1), 3, 30.0)
    path = log.write()
    assert stats_of(path, CARDS).retention.reviews == 1
    more = LogBuilder(path)  # appended after the first computation: summed incrementally
    more.review("a1", "alpha", NOW - timedelta(hours=2), 1, 30.0)
    more.review("b1", "beta", NOW - timedelta(hours=1), 3, 2.0)
    more.write()
    stats = stats_of(path, CARDS)
    assert (stats.retention.reviews, stats.retention.again, stats.reviews_total) == (2, 1, 3)
    assert stats.reviews_today == 2
    conn = sqlite3.connect(path)
    with conn:  # an undo deletes the newest review of a card
        conn.execute("DELETE FROM review_log WHERE id = (SELECT MAX(id) FROM review_log "
                     "WHERE card_id = 'a1')")  # fmt: skip
    conn.close()
    stats = stats_of(path, CARDS)
    assert (stats.retention.reviews, stats.retention.again, stats.reviews_total) == (1, 0, 2)
