"""Values outside their domains (issue 25, item 6): `drill db check` names them, the light
reader and the repository skip such a card with a notice instead of handing the values to the
scheduler, and the review log read leaves such rows out and counts them."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from storage.db import open_database
from storage.domains import OutOfDomain, card_state_problems, parse_time, review_log_problems
from storage.errors import DamagedRow
from storage.integrity import MAX_VALUE_LINES, check_database, validate_database
from storage.migrations import LATEST_VERSION
from storage.snapshot import read_snapshot
from tests.support.review_logs import LogBuilder

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
SOUND_STATE = {
    "card_id": "a", "deck_id": "d", "state": 2, "step": None, "stability": 3.0,
    "difficulty": 5.0, "due": "2026-03-12 12:00:00.000000",
    "last_review": "2026-03-09 12:00:00.000000", "reps": 1, "lapses": 0, "suspended": 0,
    "buried_until": None, "content_hash": None, "introduced_at": None, "leech": 0,
}  # fmt: skip
SOUND_LOG = {
    "id": 1, "card_id": "a", "deck_id": "d", "rating": 3,
    "reviewed_at": "2026-03-09 12:00:00.000000", "duration_ms": 1500,
    "state_before": None, "state_after": "{}",
}  # fmt: skip


def _database(path: Path) -> Path:
    log = LogBuilder(path)
    for card_id in ("a", "b"):
        log.card(card_id, "d", due=NOW - timedelta(days=1))
        log.review(card_id, "d", NOW - timedelta(days=3), 3, None)
    return log.write()


def _sql(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement)
    conn.close()


def test_what_drill_writes_is_in_the_domains() -> None:
    assert card_state_problems(SOUND_STATE) == []
    assert card_state_problems({**SOUND_STATE, "state": None, "stability": None,
                                "difficulty": None, "due": None}) == []  # fmt: skip
    assert card_state_problems({**SOUND_STATE, "state": 1, "step": 0, "stability": None}) == []
    assert review_log_problems(SOUND_LOG) == []


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("state", 99, "state 99"),
        ("state", "2", "state '2'"),
        ("stability", -1.0, "stability -1.0"),
        ("stability", float("nan"), "stability nan"),
        ("difficulty", 11.0, "difficulty 11.0"),
        ("due", "garbage", "due 'garbage' is not a time"),
        ("due", "9999-12-31 00:00:00", "outside 1970..2999"),
        ("due", "0001-01-01 00:00:00", "outside 1970..2999"),
        ("due", b"\x00\xff", "is not a time"),
        ("due", None, "due is missing"),
        ("last_review", "2026-03-09 12:00:00+05:00", "carries an offset"),
        ("reps", -3, "reps -3"),
        ("suspended", 7, "suspended 7"),
    ],
)
def test_a_card_state_outside_its_domain_is_named(column: str, value: object, says: str) -> None:
    (problem,) = card_state_problems({**SOUND_STATE, column: value})
    assert says in problem


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("rating", 7, "rating 7"),
        ("rating", 0, "rating 0"),
        ("reviewed_at", "garbage", "reviewed_at 'garbage'"),
        ("reviewed_at", 12345, "reviewed_at 12345"),
        ("duration_ms", -5, "duration_ms -5"),
        ("state_after", "{not json", "state_after"),
        ("state_before", '{"due": "yesterday"}', "state_before.due"),
    ],
)
def test_a_review_log_row_outside_its_domain_is_named(
    column: str, value: object, says: str
) -> None:
    (problem,) = review_log_problems({**SOUND_LOG, column: value})
    assert says in problem


def test_db_check_names_each_row_outside_its_domain(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    assert check_database(path)[1] == []
    _sql(path, "UPDATE card_state SET state = 99 WHERE card_id = 'a'")
    _sql(path, "UPDATE review_log SET reviewed_at = 'garbage', rating = 7 WHERE card_id = 'b'")
    _, problems = check_database(path)
    assert problems == [
        "values: card_state card 'a': state 99 is not one of 1, 2, 3 (or empty)",
        "values: review_log row 2 (card 'b'): rating 7 is not one of 1, 2, 3, 4; "
        "reviewed_at 'garbage' is not a time",
    ]
    # a restore keeps the user's history: cards skipped
    assert validate_database(path) == LATEST_VERSION


def test_db_check_lists_a_bounded_number_of_rows(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_after) VALUES (?, 'd', 9, '2026-03-01 00:00:00', 1, '{}')",
            [(f"c{i}",) for i in range(MAX_VALUE_LINES + 5)],
        )
    conn.close()
    _, problems = check_database(path)
    assert len(problems) == MAX_VALUE_LINES + 1
    assert problems[-1] == "values: 5 more row(s) with values outside their domains"


def test_the_snapshot_skips_a_damaged_card_with_a_notice(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    _sql(path, "UPDATE card_state SET due = x'00ff' WHERE card_id = 'a'")
    snapshot = read_snapshot(path, strict=True)
    assert snapshot is not None
    assert snapshot.damaged == ["a"]
    assert snapshot.schedules["a"].suspended and snapshot.schedules["a"].state is None
    assert snapshot.schedules["b"].state == 2 and not snapshot.schedules["b"].suspended
    assert snapshot.notice is not None and "1 card(s) skipped" in snapshot.notice
    assert "drill db check" in snapshot.notice


def test_the_repository_refuses_a_damaged_state_and_writes_nothing(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    _sql(path, "UPDATE card_state SET state = 99 WHERE card_id = 'a'")
    db = open_database(path)
    with pytest.raises(DamagedRow, match=r"card a: .*state 99"):
        db.review.card_state("a")

    def schedule(_before: dict | None) -> dict:
        raise AssertionError("the scheduler must not see a damaged state")

    with pytest.raises(DamagedRow):
        db.review.record_review("a", "d", 3, NOW, 10, "h", schedule)
    assert len(db.review.reviews()) == 2
    assert db.review.card_state("b") is not None
    db.close()


def test_the_log_read_leaves_out_damaged_rows_and_counts_them(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    _sql(path, "UPDATE review_log SET reviewed_at = '0001-01-01 00:00:00' WHERE card_id = 'a'")
    db = open_database(path)
    read = db.review.log_read()
    db.close()
    assert [row.card_id for row in read.rows] == ["b"]
    assert read.skipped == [1]


def test_a_row_with_a_blob_for_an_id_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = _database(tmp_path / "drill.sqlite3")
    _sql(path, "INSERT INTO card_state (card_id, deck_id) VALUES (x'00ff', 'd')")
    snapshot = read_snapshot(path, strict=True)
    assert snapshot is not None and snapshot.damaged == ["b'\\x00\\xff'"]
    assert snapshot.schedules["a"].state == 2
    assert check_database(path)[1] == [
        "values: card_state card b'\\x00\\xff': card_id b'\\x00\\xff' is not an id"
    ]


def _parse_time_by_the_rule(value: str) -> datetime | str:
    """parse_time's rule written plainly: a naive ISO time in 1970..2999, read as UTC."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return "not a time"
    if moment.tzinfo is not None:
        return "carries an offset"
    if not 1970 <= moment.year < 3000:
        return "outside 1970..2999"
    return moment.replace(tzinfo=UTC)


_TIME_TEXT = st.one_of(
    st.text(alphabet="0123456789-:.+ TWZz", max_size=32),
    st.datetimes().map(lambda moment: str(moment)),
    st.builds(
        lambda moment, tail: f"{moment}{tail}",
        st.datetimes(),
        st.sampled_from(["Z", "+00:00", "-05:30", "Z+01:00", " ", "x", "+"]),
    ),
)


@given(_TIME_TEXT)
@example("2026-03-12")  # a date alone: midnight
@example("2026-03-12 12:00:00Z")  # an offset already
@example("3000-01-01 00:00:00")
@example("1969-12-31 23:59:59.999999")
@example("2000-01-01 00:00:00 ")  # refused, though with a 'Z' after it, it would parse
@example("20260312T120")  # the same
@example("2026-11-01 01:30:00")  # fold 0, as replace() keeps it
def test_parse_time_keeps_its_rule_on_any_text(value: str) -> None:
    """parse_time reads most times through a faster path (issue 40): what it accepts, refuses
    and why is still the plain rule."""
    expected = _parse_time_by_the_rule(value)
    try:
        got: datetime | str = parse_time(value, "due")
    except OutOfDomain as error:
        assert isinstance(expected, str) and expected in str(error)
        return
    assert isinstance(expected, datetime) and got == expected and got.tzinfo is UTC
    assert (got.fold, got.replace(tzinfo=None)) == (expected.fold, expected.replace(tzinfo=None))
