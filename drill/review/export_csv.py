"""The review log as CSV in the layout the FSRS tools read (fsrs-optimizer's review-log schema,
also what fsrs-rs' examples load): card_id, review_time (milliseconds since the epoch, UTC),
review_rating (1 Again .. 4 Easy), review_state (before the review: 0 New, 1 Learning, 2 Review,
3 Relearning), review_duration (milliseconds). Custom-study ratings that kept the card's
schedule are not exported (drill.review.review_log explains why)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from datetime import datetime
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
