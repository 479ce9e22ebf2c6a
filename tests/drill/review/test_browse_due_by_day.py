"""The browser's `is:due` follows the queue's rule (issue 26): a review card is due for its whole
learner day, a learning card at its time; `drill cards is:due` and the review queue agree."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.review.browse import build_rows, search
from drill.review.queue import build_queue
from storage.snapshot import read_snapshot
from tests.support.review_logs import LogBuilder, write_browse_decks

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_is_due_counts_a_review_card_due_later_today(tmp_path: Path) -> None:
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("fsdp-shard", "infra", state=2, due=NOW + timedelta(hours=10))  # 22:00 today
    log.card("ddp-bucket", "infra", state=1, due=NOW + timedelta(hours=1))  # learning, at 13:00
    log.card("msa-depth", "biotech", state=2, due=NOW + timedelta(hours=17))  # 05:00 tomorrow
    path = log.write()
    rows = build_rows(decks, path)

    found, _ = search(rows, "is:due", NOW)
    assert [r.card_id for r in found] == ["fsdp-shard"]
    assert [r.card_id for r in search(rows, "-is:due -is:new", NOW)[0]] == [
        "msa-depth", "ddp-bucket"
    ]  # fmt: skip
    # The day starting at 23:00 instead: 22:00 today is still today, 05:00 tomorrow not yet.
    later, _ = search(rows, "is:due", NOW, day_start_hour=23)
    assert [r.card_id for r in later] == ["fsdp-shard"]
    # The day starting at 06:00: tomorrow's 05:00 belongs to today's learner day.
    early, _ = search(rows, "is:due", NOW, day_start_hour=6)
    assert sorted(r.card_id for r in early) == ["fsdp-shard", "msa-depth"]

    # The review queue, over the same rows and the same day, calls the same cards due.
    snapshot = read_snapshot(path)
    assert snapshot is not None
    tomorrow = datetime(2026, 11, 21, 4, tzinfo=UTC)  # when the next learner day starts
    queue = build_queue(
        decks.outline(), snapshot.schedules, NOW, new_limit=0, introduced_today=0, day_end=tomorrow
    )
    assert [e.card_id for e in queue] == [r.card_id for r in found]
