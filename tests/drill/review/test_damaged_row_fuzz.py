"""Fuzzing the database rows (issue 25): any value SQLite can hold in any card_state or
review_log column. `drill db check` never crashes; a review session over the database never
raises: a row drill could have written is reviewed, any other is skipped (never shown); the
review-log read and the CSV export never raise and leave out exactly the rows db check names."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from drill.decks.loader import DeckSet, load_decks
from drill.review.export_csv import write_revlog_csv
from drill.review.review_log import read_review_log_counted
from drill.review.session import ReviewSession
from drill.settings import Settings
from storage.db import open_database
from storage.domains import card_state_problems, review_log_problems
from storage.integrity import check_database
from storage.migrations import LATEST_VERSION

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
DECK = """\
deck: basics
title: Basics
cards:
  - {id: alpha, level: easy, front: What is alpha?, back: The first.}
  - {id: beta, level: medium, front: What is beta?, back: The second.}
  - {id: gamma, level: hard, front: What is gamma?, back: The third.}
"""
INT64 = 2**63 - 1
EXAMPLES = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
times = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
    lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S.%f")
)
# anything SQLite stores: NULL, integers, reals (NaN becomes NULL), text, blobs
any_value = st.one_of(
    st.none(),
    st.integers(-INT64, INT64),
    st.integers(-3, 12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1.0, 20.0),
    texts,
    times,
    st.binary(max_size=8),
)
CARD_COLUMNS = ("state", "step", "stability", "difficulty", "due", "last_review", "reps",
                "lapses", "suspended", "buried_until", "introduced_at", "leech")  # fmt: skip
LOG_COLUMNS = ("rating", "reviewed_at", "duration_ms", "state_before", "state_after")
SOUND_CARD = {"state": 2, "step": None, "stability": 3.0, "difficulty": 5.0,
              "due": "2026-03-09 12:00:00.000000", "last_review": "2026-03-06 12:00:00.000000",
              "reps": 1, "lapses": 0, "suspended": 0, "buried_until": None,
              "introduced_at": "2026-03-06 12:00:00.000000", "leech": 0}  # fmt: skip
SOUND_LOG = {"rating": 3, "reviewed_at": "2026-03-06 12:00:00.000000", "duration_ms": 900,
             "state_before": None, "state_after": "{}"}  # fmt: skip


def _row(sound: dict[str, object], columns: tuple[str, ...]) -> st.SearchStrategy[dict]:
    """A sound row with some columns replaced by arbitrary values (most examples change one
    or two, so rows near the domains' edges are common)."""
    return st.dictionaries(st.sampled_from(columns), any_value, max_size=4).map(
        lambda changed: {**sound, **changed}
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("fuzz") / "template.sqlite3"
    open_database(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    yield path


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> DeckSet:
    folder = tmp_path_factory.mktemp("decks")
    (folder / "basics.yaml").write_text(DECK)
    return load_decks([folder], include_bundled=False)


def _database(template: Path, folder: Path) -> Path:
    path = folder / "drill.sqlite3"
    for leftover in folder.glob("drill.sqlite3*"):
        leftover.unlink()
    shutil.copyfile(template, path)
    return path


def _insert(path: Path, table: str, row: dict[str, object]) -> None:
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(
                f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    except sqlite3.IntegrityError:  # NULL in a NOT NULL column: SQLite itself refuses it
        assume(False)
    finally:
        conn.close()


def _stored(path: Path, table: str) -> dict[str, object]:
    """Alpha's row as SQLite stored it (column affinity turns 1.0 into 1 in an INTEGER column)."""
    conn = sqlite3.connect(path)
    try:
        cursor = conn.execute(f"SELECT * FROM {table} WHERE card_id = 'alpha'")
        names = [column[0] for column in cursor.description]
        return dict(zip(names, cursor.fetchone(), strict=True))
    finally:
        conn.close()


@EXAMPLES
@given(row=_row(SOUND_CARD, CARD_COLUMNS))
def test_any_card_state_row_is_reviewed_or_skipped(
    template: Path, decks: DeckSet, tmp_path: Path, row: dict[str, object]
) -> None:
    path = _database(template, tmp_path)
    _insert(path, "card_state", {"card_id": "alpha", "deck_id": "basics", **row})
    version, problems = check_database(path)
    assert version == LATEST_VERSION and all(isinstance(p, str) and "\n" not in p for p in problems)
    sound = card_state_problems(_stored(path, "card_state")) == []
    assert sound == (problems == []), problems

    db = open_database(path)
    try:
        session = ReviewSession(decks, db, settings=Settings(), now=lambda: NOW)
        shown = []
        for _ in range(12):  # a learning card may come back once or twice
            if session.current is None:
                break
            shown.append(session.current.card.id)
            session.preview_intervals()
            session.rate(3, 1000)
    finally:
        db.close()
    if not sound:
        assert "alpha" not in shown
    assert "beta" in shown and "gamma" in shown  # the other cards review as usual


@EXAMPLES
@given(row=_row(SOUND_LOG, LOG_COLUMNS))
def test_any_review_log_row_is_exported_or_left_out(
    template: Path, tmp_path: Path, row: dict[str, object]
) -> None:
    path = _database(template, tmp_path)
    _insert(path, "review_log", {"card_id": "alpha", "deck_id": "basics", **row})
    _insert(path, "review_log", {"card_id": "beta", "deck_id": "basics", **SOUND_LOG})
    _, problems = check_database(path)
    sound = review_log_problems(_stored(path, "review_log")) == []
    assert sound == (problems == []), problems

    db = open_database(path)
    try:
        reviews, damaged = read_review_log_counted(db)
    finally:
        db.close()
    assert damaged == (0 if sound else 1)
    assert "beta" in [r.card_id for r in reviews]
    out = write_revlog_csv(reviews, tmp_path / "revlog.csv")
    assert out.read_text().startswith("card_id,")
