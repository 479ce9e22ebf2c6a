"""Interval fuzz as Anki applies it (rslib/src/scheduler/states/fuzz.rs, re-derived here).

An interval of 2.5 days or more may move by a delta of 1 day plus 15 % of its days between 2.5
and 7, 10 % of those between 7 and 20 and 5 % of those over 20; the bounds are that range
rounded, then held within [minimum, maximum] (with room for at least two values when the
limits allow it). One fuzz factor in [0, 1) per card and review picks the day uniformly in the
range: it is seeded by the card id and the card's review count and last review, so the
interval a preview shows is the one the rating then gives, and Hard, Good and Easy of one
review share it (as in Anki).
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime

# (start, end, factor): the share of each day of the interval inside [start, end) added to delta
FUZZ_RANGES = ((2.5, 7.0, 0.15), (7.0, 20.0, 0.10), (20.0, math.inf, 0.05))


def round_half_up(value: float) -> int:
    """Round as Rust's f32::round does for positive values (Python's round() goes to even)."""
    return math.floor(value + 0.5)


def fuzz_delta(interval: float) -> float:
    if interval < 2.5:
        return 0.0
    return 1.0 + sum(
        factor * max(0.0, min(interval, end) - start) for start, end, factor in FUZZ_RANGES
    )


def fuzz_bounds(interval: float, minimum: int, maximum: int) -> tuple[int, int]:
    """The days a fuzzed `interval` may land on, within [minimum, maximum]."""
    minimum = min(minimum, maximum)
    interval = min(max(interval, float(minimum)), float(maximum))
    delta = fuzz_delta(interval)
    lower = min(max(round_half_up(interval - delta), minimum), maximum)
    upper = min(max(round_half_up(interval + delta), minimum), maximum)
    if upper == lower and 2 < upper < maximum:
        upper = lower + 1
    return lower, upper


def fuzzed_days(factor: float | None, interval: float, minimum: int, maximum: int) -> int:
    """The interval in whole days: fuzzed with `factor` in [0, 1), or (None) only rounded and
    held within [minimum, maximum]."""
    if factor is None:
        return min(max(round_half_up(interval), minimum), maximum)
    lower, upper = fuzz_bounds(interval, minimum, maximum)
    return min(lower + math.floor(factor * (1 + upper - lower)), upper)


def fuzz_factor(card_id: str, reps: int, last_review: datetime | None) -> float:
    """A number in [0, 1) fixed for one review of one card (see the module docstring)."""
    seed = f"{card_id}\0{reps}\0{last_review.isoformat() if last_review else ''}"
    digest = hashlib.sha256(seed.encode()).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)  # 53 bits: exact, < 1
