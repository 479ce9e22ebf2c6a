"""Per-deck due/new counts for the home screen and `drill due`, and the first-paint bundle.

Light: stdlib + the deck cache + the sqlite3 snapshot. No yaml, pydantic, fsrs or sqlmodel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from drill.decks.index import CardRecord, DeckIndex, DeckOutline, Problem, load_index
from drill.paths import database_path
from drill.review.deadline import DEFAULT_SECONDS_PER_REVIEW as UNTIMED_S
from drill.review.deadline import Deadline
from drill.review.pacing import order_new
from drill.review.queue import (
    QueueEntry,
    ReviewDay,
    is_available,
    is_due,
    is_new,
    new_remaining,
    planned_review_day,
    queue_for,
)
from drill.settings import Settings, load_settings
from storage.snapshot import PlanRow, ScheduleRow, read_snapshot


@dataclass(frozen=True)
class DeckSummary:
    deck_id: str
    title: str
    due: int  # scheduled cards due now
    new: int  # new cards that today's remaining new-card allowance would show
    next_due: datetime | None  # earliest due time of a scheduled, available card

    def as_json(self) -> dict[str, object]:
        return {
            "deck": self.deck_id,
            "title": self.title,
            "due": self.due,
            "new": self.new,
            "next_due": self.next_due.isoformat() if self.next_due else None,
        }


def deck_summaries(
    outline: Sequence[DeckOutline],
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    *,
    new_limit: int,
    introduced_today: int,
    day_end: datetime | None = None,
    deadline: Deadline | None = None,
) -> list[DeckSummary]:
    """Counts per deck. The daily new limit is shared by all decks, so each deck's `new` is
    capped by what is left of it today (the total is capped again by `totals`); with a
    `deadline` (the interview plan) a deck's `new` is the number of its cards among the day's
    new cards in the plan's order, which the queue shows. A review card is due by day
    (drill.review.queue.is_due, with `day_end` the next day's start)."""
    allowance = new_remaining(new_limit, introduced_today)
    planned_new: set[str] | None = None
    if deadline is not None:
        fresh = [
            card_id
            for deck in outline
            for card_id in deck.card_ids
            if is_available(schedules.get(card_id), now) and is_new(schedules.get(card_id))
        ]
        planned_new = set(order_new(fresh, deadline)[:allowance])
    summaries: list[DeckSummary] = []
    for deck in outline:
        due = new = 0
        next_due: datetime | None = None
        for card_id in deck.card_ids:
            row = schedules.get(card_id)
            if not is_available(row, now):
                continue
            if is_new(row):
                new += planned_new is None or card_id in planned_new
            elif row is not None and row.due is not None:
                if is_due(row, now, day_end):
                    due += 1
                if next_due is None or row.due < next_due:
                    next_due = row.due
        summaries.append(DeckSummary(deck.deck_id, deck.title, due, min(new, allowance), next_due))
    return summaries


def totals(
    summaries: Iterable[DeckSummary], *, new_limit: int, introduced_today: int
) -> dict[str, int]:
    items = list(summaries)
    new = min(sum(s.new for s in items), new_remaining(new_limit, introduced_today))
    return {"due": sum(s.due for s in items), "new": new}


def due_counts(
    outline: Sequence[DeckOutline],
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    day: ReviewDay,
) -> tuple[list[DeckSummary], dict[str, int]]:
    """Per-deck counts and their totals at `now` within `day` (drill.review.queue.review_day):
    what the home screen, `drill due` and the stats' "due today" show. `schedules` are the
    stored ones; with a plan the day moves them (ReviewDay.planned), as the queue does."""
    limits = {"new_limit": day.new_limit, "introduced_today": day.introduced_today}
    planned = day.planned(schedules, now)
    summaries = deck_summaries(outline, planned, now, **limits, day_end=day.next_start,
                               deadline=day.deadline)  # fmt: skip
    return summaries, totals(summaries, **limits)


@dataclass
class FirstPaint:
    """All the home screen and the first review card need, read without heavy imports."""

    index: DeckIndex
    summaries: list[DeckSummary]
    totals: dict[str, int]
    queue: list[QueueEntry]
    first: CardRecord | None
    schedules: Mapping[str, ScheduleRow]  # as stored (the plan's moves are in the counts)
    plan: PlanRow | None = None  # the interview profile in force (Snapshot.plan)
    typical_answer_s: float | None = None  # Snapshot.typical_answer_s
    deadline: Deadline | None = None  # the plan as the scheduler reads it, when active today
    plan_notice: str | None = None  # Snapshot.plan_notice: the stored plan row is damaged
    spent_today_s: float = 0.0  # seconds answered today (Snapshot.spent_seconds)

    @property
    def problems(self) -> list[Problem]:
        return self.index.problems

    @property
    def invalid_paths(self) -> list[Path]:
        return self.index.invalid_paths

    def edited_since_review(self, card_id: str) -> bool:
        row = self.schedules.get(card_id)
        record = self.index.card_record(card_id)
        if row is None or row.content_hash is None or record is None:
            return False
        return row.content_hash != record.content_hash()


def deck_index(
    extra_dirs: Iterable[str | Path] | None = None, include_bundled: bool = True
) -> DeckIndex:
    """The decks as plain data, for counting (`drill due`): from the deck cache when it is
    fresh, without building a model per card (issue 40: 2.4 of 5 s at 50,000 cards); else
    validated by the loader, which refreshes the cache. DeckPathError for a missing dir."""
    index = load_index(extra_dirs, include_bundled)
    if index is None:
        from drill.decks.loader import load_decks

        index = load_decks(extra_dirs, include_bundled).index
        assert index is not None  # load_decks always assembles one
    return index


def first_paint(
    extra_dirs: Iterable[str | Path] | None = None,
    *,
    deck_id: str | None = None,
    include_bundled: bool = True,
    now: datetime | None = None,
    settings: Settings | None = None,
    db_path: Path | None = None,
    index: DeckIndex | None = None,
) -> FirstPaint | None:
    """None when the deck cache is stale or the database needs migrating: then load the slow
    way (loader.load_decks + storage.db.open_database), which fixes both for next time. With
    `index` (the validated decks, DeckSet.index) the deck cache is not read at all."""
    if index is None:
        index = load_index(extra_dirs, include_bundled)
    if index is None:
        return None
    snapshot = read_snapshot(db_path or database_path())
    if snapshot is None:
        return None
    now = now or datetime.now(UTC)
    settings = settings or load_settings()
    outline = index.outline()
    day = planned_review_day(now, settings, snapshot, index)
    summaries, total = due_counts(outline, snapshot.schedules, now, day)
    queue = queue_for(outline, snapshot.schedules, now, day, deck_id)
    first = index.card_record(queue[0].card_id) if queue else None
    spent = snapshot.spent_seconds(day.start, now, snapshot.typical_answer_s or UNTIMED_S)
    return FirstPaint(index, summaries, total, queue, first, snapshot.schedules, snapshot.plan,
                      snapshot.typical_answer_s, day.deadline, snapshot.plan_notice,
                      spent)  # fmt: skip
