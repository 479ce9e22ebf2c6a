"""The review-log CSV: fsrs-optimizer's columns in order, times in ms since the epoch, the state
before each review; written from the app's database and read back unchanged."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drill.database import open_app_database
from drill.review.export_csv import COLUMNS, NothingToExport, to_ms, write_revlog_csv
from drill.review.optimize import review_histories
from drill.review.review_log import LoggedReview, read_review_log
from drill.review.scheduler import rate_card
from tests.support.synthetic_reviews import synthetic_reviews, write_review_log


def test_columns_are_the_fsrs_optimizer_review_log_schema(tmp_path: Path) -> None:
    db = open_app_database(tmp_path / "drill.sqlite3")
    t0 = datetime(2026, 1, 5, 8, 30, 0, 250_000, tzinfo=UTC)
    rate_card(db, "alpha", "basics", 3, content_hash=None, now=t0, duration_ms=4200)
    later = datetime(2026, 1, 8, 8, 30, tzinfo=UTC)
    rate_card(db, "alpha", "basics", 1, content_hash=None, now=later, duration_ms=900)
    reviews = read_review_log(db)
    db.close()
    out = write_revlog_csv(reviews, tmp_path / "revlog.csv")
    with out.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS == (
        "card_id", "review_time", "review_rating", "review_state", "review_duration",
    )  # fmt: skip
    assert rows[1] == ["alpha", str(to_ms(t0)), "3", "0", "4200"]  # first review: New (0)
    assert rows[1][1] == "1767601800250"
    state = rows[2][3]
    assert rows[2][:3] == ["alpha", "1767861000000", "1"] and state in ("1", "2")


def _key(r: LoggedReview) -> tuple[str, int, int, int, int]:
    return (r.card_id, to_ms(r.reviewed_at), r.rating, r.state, r.duration_ms)


def _read_csv(path: Path) -> list[LoggedReview]:
    """The CSV as the FSRS tools read it: one review per row, in COLUMNS."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            LoggedReview(
                row["card_id"],
                datetime.fromtimestamp(int(row["review_time"]) / 1000, tz=UTC),
                int(row["review_rating"]),
                int(row["review_state"]),
                int(row["review_duration"]),
            )
            for row in csv.DictReader(handle)
        ]


def test_round_trip_keeps_every_review(tmp_path: Path) -> None:
    original = synthetic_reviews(500)
    db = open_app_database(write_review_log(tmp_path / "drill.sqlite3", original))
    stored = read_review_log(db)
    db.close()
    back = _read_csv(write_revlog_csv(stored, tmp_path / "revlog.csv"))
    assert len(back) == len(original) == 500
    key = [(r.card_id, to_ms(r.reviewed_at), r.rating, r.state, r.duration_ms) for r in back]
    expected = [
        (r.card_id, to_ms(r.reviewed_at), r.rating, r.state, r.duration_ms) for r in original
    ]
    assert key == expected
    assert review_histories(back, tz=UTC) == review_histories(original, tz=UTC)


def test_an_empty_log_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(NothingToExport):
        write_revlog_csv([], tmp_path / "revlog.csv")
    assert not (tmp_path / "revlog.csv").exists()
