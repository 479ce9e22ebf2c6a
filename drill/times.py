"""The one wall clock of the app (aware UTC now: what the database stores and compares) and the
learner's day: the local calendar day that starts at `day_start_hour`:00 (04:00 by default, as
Anki's "next day starts at").

A day start is worked out in local time *for that date* (so it is right across a DST change:
the day after the clocks go forward starts at 04:00 CEST, the day before at 04:00 CET). `tz`
None means the machine's local zone (what the app uses); tests pass a zoneinfo zone.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo


def utc_now() -> datetime:
    return datetime.now(UTC)


def learner_date(moment: datetime, hour: int = 4, tz: tzinfo | None = None) -> date:
    """The learner's day that `moment` falls in: its local wall-clock date when days start at
    `hour`:00, so 03:00 with hour 4 still belongs to the day before."""
    local = moment.astimezone(tz)
    return local.date() if local.hour >= hour else local.date() - timedelta(days=1)


def start_of(day: date, hour: int = 4, tz: tzinfo | None = None) -> datetime:
    """When learner day `day` starts: `hour`:00 local time on that date, with that date's own
    UTC offset (aware, in `tz`; local time when `tz` is None)."""
    naive = datetime.combine(day, time(hour))
    if tz is None:
        return naive.astimezone()  # a naive time is read as local time, with that date's offset
    # a wall-clock hour skipped by a DST change is normalised to the real instant after it
    return naive.replace(tzinfo=tz).astimezone(UTC).astimezone(tz)


def day_start(now: datetime, hour: int = 4, tz: tzinfo | None = None) -> datetime:
    """Start of the learner's day containing `now`, in `now`'s time zone."""
    return start_of(learner_date(now, hour, tz), hour, tz).astimezone(now.tzinfo)


def next_day_start(now: datetime, hour: int = 4, tz: tzinfo | None = None) -> datetime:
    """When the learner's next day begins (bury lasts until then), in `now`'s time zone."""
    following = learner_date(now, hour, tz) + timedelta(days=1)
    return start_of(following, hour, tz).astimezone(now.tzinfo)


def days_between(
    earlier: datetime, later: datetime, hour: int = 4, tz: tzinfo | None = None
) -> int:
    """Whole learner days from `earlier` to `later` (0 on the same learner day): what FSRS calls
    the elapsed days, for the scheduler and for the fit alike."""
    return (learner_date(later, hour, tz) - learner_date(earlier, hour, tz)).days
