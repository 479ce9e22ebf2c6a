"""The review log as CSV in the layout the FSRS tools read (fsrs-optimizer's review-log schema,
also what fsrs-rs' examples load): card_id, review_time (milliseconds since the epoch, UTC),
review_rating (1 Again .. 4 Easy), review_state (before the review: 0 New, 1 Learning, 2 Review,
3 Relearning), review_duration (milliseconds). Custom-study ratings that kept the card's
schedule are not exported (drill.review.review_log explains why)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from drill.errors import DrillError
from drill.review.export_target import is_stdout, write_atomically
from drill.review.review_log import LoggedReview

COLUMNS = ("card_id", "review_time", "review_rating", "review_state", "review_duration")


class NothingToExport(DrillError):
    """The review log (of the chosen decks) is empty: no file is written."""


def to_ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def write_revlog_csv(
    reviews: Sequence[LoggedReview], out: Path, stdout: IO[str] | None = None
) -> Path:
    """Write `reviews` to `out` (atomically; "-": to `stdout`, default sys.stdout);
    NothingToExport when there are none. See drill.review.export_target for what `out` may be."""
    if not reviews:
        raise NothingToExport("nothing to export: the review log is empty")
    if is_stdout(out):
        _write_rows(reviews, stdout or sys.stdout)
        return out

    def write(path: Path) -> None:
        with path.open("w", newline="", encoding="utf-8") as handle:
            _write_rows(reviews, handle)

    return write_atomically(out, write)


def _write_rows(reviews: Sequence[LoggedReview], handle: IO[str]) -> None:
    writer = csv.writer(handle)
    writer.writerow(COLUMNS)
    for r in reviews:
        writer.writerow((r.card_id, to_ms(r.reviewed_at), r.rating, r.state, r.duration_ms))


def read_revlog_csv(path: Path) -> list[LoggedReview]:
    """Read a review-log CSV with COLUMNS (extra columns ignored); DrillError naming the line
    on a missing column or a bad value."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise DrillError(f"{path}: missing column(s): {', '.join(missing)}")
            reviews = []
            for row in reader:
                try:
                    reviews.append(_review(row))
                except (TypeError, ValueError, OverflowError, OSError) as error:
                    raise DrillError(f"{path}:{reader.line_num}: bad row: {error}") from None
            return reviews
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DrillError(f"cannot read {path}: {error}") from None


def _review(row: dict[str, str]) -> LoggedReview:
    rating, state = int(row["review_rating"]), int(row["review_state"] or 0)
    if rating not in (1, 2, 3, 4) or state not in (0, 1, 2, 3):
        raise ValueError(f"rating {rating} / state {state} out of range")
    at = datetime.fromtimestamp(int(row["review_time"]) / 1000, tz=UTC)
    return LoggedReview(row["card_id"], at, rating, state, int(row["review_duration"] or 0))
