"""Pure text formatting for the TUI (intervals, due times, summaries). No widget imports."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from drill.review.ratings import RATING_NAMES


def format_interval(delta: timedelta) -> str:
    """Short Anki-style interval: '<1m', '10m', '5h', '3d', '2.1mo', '1.4y'."""
    seconds = max(delta.total_seconds(), 0.0)
    minutes = seconds / 60
    if minutes < 1:
        return "<1m"
    if minutes < 60:
        return f"{round(minutes)}m"
    hours = minutes / 60
    if hours < 24:
        return f"{round(hours)}h"
    days = hours / 24
    if days < 30:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30:.1f}mo"
    return f"{days / 365:.1f}y"


def format_next_due(due: datetime | None, now: datetime) -> str:
    """When the next card of a deck is due, relative to now: 'now', 'in 3h', 'in 2d', or '-'."""
    if due is None:
        return "-"
    delta = due - now
    if delta <= timedelta(0):
        return "now"
    return f"in {format_interval(delta)}"


# format_interval's tiers: (the seconds one step of its rounded number stands for, the tier's
# upper end in seconds). Its text changes where the rounded number does: half a step between.
_INTERVAL_TIERS = (
    (60.0, 3600.0),
    (3600.0, 86400.0),
    (86400.0, 30 * 86400.0),
    (3 * 86400.0, 365 * 86400.0),  # "2.1mo": a tenth of 30 days
    (36.5 * 86400.0, math.inf),  # "1.4y": a tenth of 365 days
)


def next_due_text_change(due: datetime | None, now: datetime) -> timedelta | None:
    """How long until format_next_due(due, now) reads otherwise ("in 2m" -> "in 1m" -> "now");
    None when it never will ('-', 'now'). Never late, at most a moment early."""
    if due is None:
        return None
    left = (due - now).total_seconds()
    if left <= 0:
        return None
    if left < 60:
        return timedelta(seconds=left)  # "<1m" until "now"
    tier = next(i for i, (_, upper) in enumerate(_INTERVAL_TIERS) if left < upper)
    step = _INTERVAL_TIERS[tier][0]
    lower = _INTERVAL_TIERS[tier - 1][1] if tier else 60.0  # where the tier below begins
    half_step_below = (math.floor(left / step - 0.5) + 0.5) * step
    return timedelta(seconds=left - max(half_step_below, lower))


def format_duration(seconds: float) -> str:
    """Session time as '42s', '3m 05s' or '1h 02m'."""
    total = max(round(seconds), 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def rating_label(rating: int, interval: timedelta | None) -> str:
    """Button text for a rating key: '3 Good · 4d'."""
    name = RATING_NAMES[rating]
    if interval is None:
        return f"{rating} {name}"
    return f"{rating} {name} · {format_interval(interval)}"


def back_markdown(back: str, rubric: list[str] | tuple[str, ...]) -> str:
    """The revealed side: the answer, then the rubric as a bullet list when the card has one."""
    if not rubric:
        return back
    bullets = "\n".join(f"- {item}" for item in rubric)
    return f"{back.rstrip()}\n\n**Rubric**\n\n{bullets}\n"
