"""No-progress watchdog for a launch of user code (torch-free): a run whose ranks all stopped
making progress is a hang, stopped seconds after it began instead of at the launch's deadline.

Progress is what the bootstrap records into the observe dir (protocol.py): a line per optimizer
step, per dataset fetch, per checkpoint write and per optimizer state digest, and the end record
when the script returns. Every record is appended, so any rank's progress grows the total size of
those files: the watchdog compares that size at each poll (never sleeps) and reads the records
only when it fires, to say how far each rank got.

    watch = StallWatch(observe_dir, world_size)      # when the launch starts
    stall = watch.poll()                             # about every 50 ms; a Stall once it fires

It fires once no rank made progress for STALL_S after the first optimizer step, or for STARTUP_S
before it (since the start or the last fetch): a rank waiting in a collective that another rank
never reaches writes nothing, while a correct run records something on some rank every step.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import step_records

# After the first optimizer step. Measured on two cores (the coding round's model answer, every
# launch cold and warm, also beside 12 busy processes): no gap between two records of a run above
# 0.1 s, at most 1.2 s from the last record to the exit (the launcher's teardown included). A
# torch.compile recompile mid-run took 5.6 s (cold cache). Eight seconds still stops a hang in
# each of the grading's six W>=2 launches (two at a time) within the minute: 28 s for the
# grading warm, 45 s cold (tests/trainer_lab/grading/fixtures/wrong_hangs_at_w2.py).
STALL_S = 8.0
# Before the first optimizer step: the launcher starts, each rank imports torch (5-10 s on a
# loaded two-core machine; 8.6 s measured for W=3 cold beside 12 busy processes), joins the process
# group, builds the model and takes its first step, which a torch.compile compiles (25 s cold
# cache). Longer than the one-process run's deadline (SKELETON_TIMEOUT_S, 40 s), which stays the
# verdict on a script that never starts to train.
STARTUP_S = 45.0
# While a rank starts DataLoader worker processes (until their first batch) or shuts them down
# (protocol.workers_file): a spawned worker imports torch and the script again (as a rank does at
# the start), and torch joins each stopping worker for up to 5 s before it terminates it. Seen
# in a loaded CI run: a correct script's two persistent spawned workers per rank, shut down when
# main() returned, left no record for over 8 s (1-2 s quiet).
WORKERS_S = STARTUP_S

# the files each rank appends its records to (protocol.py)
PROGRESS_FILES = (
    protocol.steps_file,
    protocol.fetch_file,
    protocol.saves_file,
    protocol.optimizer_file,
    protocol.workers_file,
    protocol.end_file,
)


@dataclass(frozen=True)
class Stall:
    """What the watchdog saw when it fired."""

    quiet_s: float  # how long nothing moved
    limit_s: float  # the threshold it passed (stall_s, or startup_s before the first step)
    started: bool  # whether an optimizer step was recorded
    world_size: int
    steps: dict[int, int]  # rank -> optimizer steps recorded, for the ranks that recorded any

    def observed(self) -> str:
        if not self.started:
            return f"no rank made progress for {self.quiet_s:.0f} s (no optimizer step yet)"
        done = ", ".join(f"rank {r}: {n}" for r, n in sorted(self.steps.items())) or "none"
        return f"no rank made progress for {self.quiet_s:.0f} s (optimizer steps done: {done})"

    def expected(self) -> str:
        if not self.started:
            return f"expected the first optimizer step within {self.limit_s:.0f} s"
        return (
            f"expected an optimizer step, a dataset fetch or a checkpoint write on some rank at "
            f"least every {self.limit_s:.0f} s (a step takes well under a second)"
        )

    def likely_cause(self) -> str:
        if self.world_size >= 2:
            return (
                "the ranks wait for each other: a collective (all_reduce, barrier, ...) that not "
                "every rank calls, or calls in another order"
                + ("" if self.started else ", before the first step")
            )
        return "the script waits or loops without training (a sleep, a lock, an endless loop)"

    def text(self) -> str:
        """observed; expected; likely cause (the grader's check-detail form)."""
        return f"{self.observed()}; {self.expected()}; likely cause: {self.likely_cause()}"


def in_worker_change(observe_dir: Path, world_size: int) -> bool:
    """Whether some rank's last DataLoader-worker event is one it is still inside (its workers
    starting, or stopping): the rank is working, not waiting on a peer."""
    for rank in range(max(world_size, 1)):
        try:
            with open(observe_dir / protocol.workers_file(rank), "rb") as f:
                f.seek(max(os.fstat(f.fileno()).st_size - 512, 0))
                event = json.loads(f.read().strip().rsplit(b"\n", 1)[-1]).get("event")
        except (OSError, ValueError, AttributeError):
            continue
        if event in protocol.WORKER_EVENTS_OPEN:
            return True
    return False


def progress_size(observe_dir: Path, world_size: int) -> tuple[int, int]:
    """(total size of the files the ranks append their records to, size of the step records
    alone); (0, 0) before any."""
    total = steps = 0
    for rank in range(max(world_size, 1)):
        for name in PROGRESS_FILES:
            try:
                size = os.stat(observe_dir / name(rank)).st_size
            except OSError:
                continue
            total += size
            steps += size if name is protocol.steps_file else 0
    return total, steps


class StallWatch:
    """Fires once: poll() returns the Stall when no rank made progress for stall_s (startup_s
    before the first optimizer step), None until then and after."""

    def __init__(
        self,
        observe_dir: Path,
        world_size: int,
        clock: Callable[[], float] = time.monotonic,
        stall_s: float = STALL_S,
        startup_s: float = STARTUP_S,
    ) -> None:
        self.dir = observe_dir
        self.world_size = world_size
        self.clock = clock
        self.stall_s = stall_s
        self.startup_s = startup_s
        self._size, steps = progress_size(observe_dir, world_size)
        self._since = clock()  # when the size last changed (or the watch started)
        self._started = steps > 0  # an optimizer step was recorded
        self.fired: Stall | None = None

    def poll(self) -> Stall | None:
        if self.fired is not None:
            return None
        now = self.clock()
        size, steps = progress_size(self.dir, self.world_size)
        if size != self._size:
            self._size, self._since = size, now
            self._started = self._started or steps > 0
            return None
        quiet = now - self._since
        limit = self.stall_s if self._started else self.startup_s
        if quiet < limit:
            return None
        if quiet < WORKERS_S and in_worker_change(self.dir, self.world_size):
            return None
        steps = {
            rank: len(step_records(self.dir, rank))
            for rank in range(max(self.world_size, 1))
            if (self.dir / protocol.steps_file(rank)).exists()
        }
        self.fired = Stall(quiet, limit, self._started, self.world_size, steps)
        return self.fired
