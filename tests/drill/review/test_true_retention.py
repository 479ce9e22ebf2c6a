"""True retention leaves out custom-study ratings of cards that were not due (schedule kept), as
Anki's leaves out filtered-deck reviews, by the rule the optimizer and the CSV export use
(review_log.schedule_kept); the day's review count still includes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from drill.review.review_log import read_review_log, schedule_kept
from drill.review.scheduler import make_scheduler, rate_card
from drill.review.stats import CardInfo, compute_stats
from drill.settings import Settings
from storage.db import open_database
from storage.schema_names import StateDict

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def _kept(before: StateDict | None) -> StateDict:
    return dict(before or {})  # what custom study writes for a card not due yet


def test_custom_study_ahead_is_left_out_of_true_retention(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    db = open_database(path)
    settings = Settings()
    scheduler = make_scheduler(settings, fuzzing=False)
    try:
        now, rated = T0, None
        while rated is None or rated.due - rated.after["last_review"] < timedelta(days=21):
            rated = rate_card(db, "m", "d", 3, content_hash=None, now=now, settings=settings,
                              scheduler=scheduler)  # fmt: skip
            now = max(rated.due, now + timedelta(minutes=15))
        due = rated.due
        early = due - timedelta(days=3)  # custom study ahead: rated Again, schedule kept
        rate_card(db, "m", "d", 1, content_hash=None, now=early, schedule=_kept)
        rate_card(db, "m", "d", 3, content_hash=None, now=due + timedelta(hours=8),
                  settings=settings, scheduler=scheduler)  # fmt: skip
        rows = db.review.log_read().rows
        assert len(read_review_log(db)) == len(rows) - 1  # the optimizer's rule drops one row
    finally:
        db.close()
    assert [schedule_kept(r.state_before, r.state_after) for r in rows].count(True) == 1
    stats = compute_stats(path, [CardInfo("m", "d")], due + timedelta(hours=9), day_start_hour=0)
    assert (stats.retention.reviews, stats.retention.again) == (1, 0)  # the due Good only
    assert stats.reviews_total == len(rows)  # the kept review still counts as done
