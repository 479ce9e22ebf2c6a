"""Step-time analysis for the step-phases lab (torch-free, pure functions).

- `percentile`, `median`: plain order statistics over step times.
- `find_spikes`: steps whose time stands out from the bulk (robust: median + MAD).
- `detect_period`: the period of the spikes, found from the spike positions alone; None when
  the spikes are too few or not regular (noise spikes from GC or other processes are not).
- `name_straggler`: the rank whose own work (step minus gradient-sync wait) is largest by a
  clear margin; None when no rank stands out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, q in [0, 100]."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def find_spikes(step_times: dict[int, float], min_ratio: float = 2.0) -> list[int]:
    """Steps whose time exceeds both median + 6 * robust sigma and min_ratio * median."""
    if len(step_times) < 4:
        return []
    values = list(step_times.values())
    mid = median(values)
    sigma = 1.4826 * median([abs(v - mid) for v in values])
    threshold = max(mid + 6 * sigma, min_ratio * mid)
    return sorted(step for step, t in step_times.items() if t > threshold)


@dataclass(frozen=True)
class Period:
    period: int
    phase: int  # spike steps are congruent to phase modulo period
    hits: int  # steps of that phase that spiked
    explained: float  # share of all spikes that fall on the period


def detect_period(
    spikes: Sequence[int],
    steps: Sequence[int],
    min_hits: int = 3,
    min_hit_rate: float = 0.75,
    min_explained: float = 0.5,
) -> Period | None:
    """The smallest period p (and phase) such that nearly every step of that phase spiked.

    Folding the step numbers by each candidate period tolerates noise spikes (GC, a busy
    neighbour) between the periodic ones, which a gap histogram does not.
    """
    if len(spikes) < min_hits or not steps:
        return None
    spiked = set(spikes)
    first, last = min(steps), max(steps)
    for period in range(2, (last - first + 1) // min_hits + 1):
        for phase in range(period):
            due = [s for s in range(first, last + 1) if s % period == phase]
            hits = sum(1 for s in due if s in spiked)
            if (
                len(due) >= min_hits
                and hits >= min_hits
                and hits / len(due) >= min_hit_rate
                and hits / len(spiked) >= min_explained
            ):
                return Period(period, phase, hits, hits / len(spiked))
    return None


def name_straggler(
    own_work: dict[int, float], min_excess_ratio: float = 1.5, min_excess_ms: float = 15.0
) -> int | None:
    """Rank whose median own-work time (ms) exceeds every other rank's by min_excess_ratio and
    by min_excess_ms. The floor in ms keeps scheduling noise from naming a rank: a step here
    is ~6 ms of own work, and on a loaded two-core machine one rank's median was seen 1.5x
    the other's with no rank slowed."""
    if len(own_work) < 2:
        return None
    ranked = sorted(own_work.items(), key=lambda item: item[1], reverse=True)
    (top_rank, top), (_, second) = ranked[0], ranked[1]
    if second <= 0 or top / second < min_excess_ratio or top - second < min_excess_ms:
        return None
    return top_rank
