"""Run independent jobs concurrently within a CPU-core budget, longest first.

A job costs `cores` (a W-rank lab costs W cores). Jobs start in order of their estimated
duration, longest first; a job starts only while the cores in use plus its own fit the budget,
except a job larger than the whole budget, which runs alone. One failing job never stops the
others; a cancel (the Event, or Ctrl-C while waiting) stops starting new jobs, lets every running
job see the Event (the runner must kill its processes) and waits for them before returning.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Planned(Generic[T]):
    item: T
    cores: int
    estimate_s: float


def default_budget(cpu_count: int | None = None) -> int:
    """Every core of this machine (at least one)."""
    return max(1, cpu_count if cpu_count is not None else (os.cpu_count() or 1))


def longest_first(planned: Sequence[Planned[T]]) -> list[Planned[T]]:
    """Descending estimate; ties keep the given order (sorted is stable)."""
    return sorted(planned, key=lambda p: -p.estimate_s)


def _next_fitting(pending: list[Planned[T]], in_use: int, budget: int) -> Planned[T] | None:
    for candidate in pending:
        if in_use + candidate.cores <= budget:
            return candidate
    if in_use == 0 and pending:
        return pending[0]  # larger than the whole budget: runs alone
    return None


def run_scheduled(
    planned: Sequence[Planned[T]],
    run: Callable[[T, threading.Event], R],
    budget: int,
    *,
    on_error: Callable[[T, BaseException], R],
    cancel: threading.Event | None = None,
    on_start: Callable[[T], None] | None = None,
    on_finish: Callable[[T, R], None] | None = None,
) -> list[tuple[T, R]]:
    """Run every planned item; return (item, result) in completion order.

    `run` is called in a worker thread with the cancel Event; an exception it raises becomes
    `on_error(item, exc)`. Items never started because of a cancel are left out of the result.
    KeyboardInterrupt while waiting sets the cancel, waits for the running jobs, and re-raises.
    """
    budget = max(1, budget)
    cancel = cancel or threading.Event()
    pending = longest_first(planned)
    done: queue.Queue[tuple[Planned[T], R]] = queue.Queue()
    finished: list[tuple[T, R]] = []
    in_use = 0
    running = 0

    def work(entry: Planned[T]) -> None:
        try:
            outcome = run(entry.item, cancel)
        except Exception as error:  # one failing job never stops the others
            outcome = on_error(entry.item, error)
        done.put((entry, outcome))

    def collect(entry: Planned[T], outcome: R) -> None:
        nonlocal in_use, running
        in_use -= entry.cores
        running -= 1
        finished.append((entry.item, outcome))
        if on_finish:
            on_finish(entry.item, outcome)

    try:
        while pending or running:
            while pending and not cancel.is_set():
                entry = _next_fitting(pending, in_use, budget)
                if entry is None:
                    break
                pending.remove(entry)
                in_use += entry.cores
                running += 1
                thread = threading.Thread(target=work, args=(entry,), daemon=True)
                thread.start()
                if on_start:
                    on_start(entry.item)
            if not running:
                break  # cancelled with nothing left running
            collect(*done.get())
    except KeyboardInterrupt:
        cancel.set()
        while running:
            collect(*done.get())
        raise
    return finished
