"""Which cards to review now: due cards first (oldest due first), then new cards up to the daily
limit. Pure functions over plain data (deck outlines + stored schedules): stdlib only, so the
first paint can build the queue without importing the scheduler or the ORM."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from drill.deck_cache import DeckOutline
from storage.snapshot import ScheduleRow


@dataclass(frozen=True, slots=True)
class QueueEntry:
    card_id: str
    deck_id: str
    is_new: bool


def day_start(now: datetime, hour: int = 4) -> datetime:
    """Start of the learner's current day: the last local `hour`:00 at or before `now`."""
    local = now.astimezone()
    start = datetime.combine(local.date(), time(hour), tzinfo=local.tzinfo)
    if start > local:
        start = datetime.combine(local.date() - timedelta(days=1), time(hour), tzinfo=local.tzinfo)
    return start.astimezone(now.tzinfo)


def next_day_start(now: datetime, hour: int = 4) -> datetime:
    """When "tomorrow" begins (bury lasts until then). DST shifts are absorbed by re-localising."""
    start = day_start(now, hour)
    candidate = (start + timedelta(hours=25)).astimezone()
    nxt = datetime.combine(candidate.date(), time(hour), tzinfo=candidate.tzinfo)
    return nxt.astimezone(now.tzinfo)


def is_available(row: ScheduleRow | None, now: datetime) -> bool:
    """Not suspended and not buried past `now`."""
    if row is None:
        return True
    if row.suspended:
        return False
    return row.buried_until is None or row.buried_until <= now


def is_new(row: ScheduleRow | None) -> bool:
    return row is None or row.state is None


def new_remaining(new_limit: int, introduced_today: int) -> int:
    return max(0, new_limit - introduced_today)


def build_queue(
    outline: Sequence[DeckOutline],
    schedules: Mapping[str, ScheduleRow],
    now: datetime,
    *,
    new_limit: int,
    introduced_today: int,
    deck_id: str | None = None,
) -> list[QueueEntry]:
    """Due cards (due <= now), oldest due first; then new cards in deck order, up to
    `new_limit - introduced_today`. Suspended and buried-until-later cards are skipped."""
    due: list[tuple[datetime, int, QueueEntry]] = []
    fresh: list[QueueEntry] = []
    order = 0
    for deck in outline:
        if deck_id is not None and deck.deck_id != deck_id:
            continue
        for card_id in deck.card_ids:
            row = schedules.get(card_id)
            if not is_available(row, now):
                continue
            if is_new(row):
                fresh.append(QueueEntry(card_id, deck.deck_id, True))
            elif row is not None and row.due is not None and row.due <= now:
                due.append((row.due, order, QueueEntry(card_id, deck.deck_id, False)))
                order += 1
    due.sort(key=lambda item: (item[0], item[1]))
    return [entry for _, _, entry in due] + fresh[: new_remaining(new_limit, introduced_today)]
