"""What a lab driver works with (torch-free): launches, progress, observations, checks.

A driver is `drive(run: LabContext) -> None` in trainer_lab/labs/<name>/__init__.py. It calls
`run.launch(...)` one or more times, reads the ranks' events, then records observations with
`run.observe(...)` and verdicts with `run.check(...)`. trainer_lab.driver turns that into
result.json.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_lab.catalogue_types import LabSpec
from trainer_lab.events import read_run_events
from trainer_lab.files import read_head
from trainer_lab.launcher import LaunchResult, RootCause, launch
from trainer_lab.result import Check, LaunchInfo, events_file, variant_dir

MAX_TAIL_READ_BYTES = 4 * 1024**2  # of one events file per poll: a burst is taken in pieces


class LabError(Exception):
    """The lab could not produce its observations (a launch failed unexpectedly, ...)."""

    def __init__(self, message: str, root_cause: RootCause | None = None) -> None:
        super().__init__(message)
        self.root_cause = root_cause


class LabTimeout(LabError):
    """The lab's deadline passed."""


class LabCancelled(LabError):
    """The run was cancelled (the driver got SIGTERM, SIGHUP or SIGINT)."""


def emit(record: dict[str, Any]) -> None:
    """One JSON line on stdout: the runner/CLI stream these."""
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class StepTail:
    """Follows rank 0's events files under a running launch's dir (also runs/<x>/ inside it)
    and reports the latest step seen."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.offsets: dict[Path, int] = {}
        self.step: int | None = None
        self.label: str | None = None

    def poll(self) -> bool:
        """Read new whole lines; True when a new step was seen."""
        seen = False
        try:  # checkpoint dirs are renamed and deleted while we walk
            paths = list(self.root.rglob(events_file(0)))
        except OSError:
            return False
        for path in paths:
            offset = self.offsets.get(path, 0)
            try:  # a FIFO or a link planted there is refused, never waited on (trainer_lab.files)
                chunk, more = read_head(path, MAX_TAIL_READ_BYTES, offset)
            except OSError:
                continue
            end = chunk.rfind(b"\n") + 1
            if end == 0 and more:  # one line longer than a read: not a step line, skip it
                end = len(chunk)
            self.offsets[path] = offset + end
            for line in chunk[:end].splitlines():
                if b'"event":"step"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                self.step, self.label, seen = record.get("step"), record.get("run"), True
        return seen


@dataclass
class LabContext:
    spec: LabSpec
    params: dict[str, Any]
    world_size: int
    out_dir: Path
    deadline: float  # time.monotonic() value
    observations: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    launches: list[LaunchInfo] = field(default_factory=list)
    backend: str | None = None
    total_steps: int = 0
    cancel: threading.Event | None = None  # set: stop the running launch, start no other
    _done: int = 0

    # -- progress ---------------------------------------------------------------------------
    def plan(self, total: int) -> None:
        """Declare how many progress units (usually launches) the lab will report."""
        self.total_steps = total

    def progress(self, message: str, advance: int = 0) -> None:
        self._done += advance
        emit(
            {
                "event": "progress",
                "done": self._done,
                "total": max(self.total_steps, self._done),
                "message": message,
            }
        )

    # -- launches ---------------------------------------------------------------------------
    def run_dir(self, variant: str | None = None) -> Path:
        return self.out_dir if variant is None else variant_dir(self.out_dir, variant)

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def launch(
        self,
        task: str,
        spec: dict[str, Any] | None = None,
        variant: str | None = None,
        world_size: int | None = None,
        expect_failure: bool = False,
        env: dict[str, str] | None = None,
        max_restarts: int = 0,
        extra_args: tuple[str, ...] = (),
    ) -> LaunchResult:
        """Run a worker task via torchrun into run_dir(variant), within the lab's deadline.

        Raises LabTimeout when the deadline passes, LabCancelled when the run is cancelled,
        LabError when the launch fails and expect_failure is False (with the first failing
        rank as root cause).
        """
        remaining = self.remaining_s()
        label = variant or self.spec.name
        if self.cancel is not None and self.cancel.is_set():
            raise LabCancelled(f"cancelled before launching {label}")
        if remaining <= 0:
            raise LabTimeout(f"deadline passed before launching {label}")
        self.progress(f"launching {label} on {world_size or self.world_size} ranks")
        tail = StepTail(self.run_dir(variant))
        last_report = [0.0]

        def report_steps() -> None:
            now = time.monotonic()
            if now - last_report[0] >= 0.5 and tail.poll():
                last_report[0] = now
                run_name = f" {tail.label}" if tail.label else ""
                self.progress(f"{label}:{run_name} step {tail.step}")

        result = launch(
            task,
            spec or {},
            self.run_dir(variant),
            world_size or self.world_size,
            remaining,
            cancel=self.cancel,
            env=env,
            max_restarts=max_restarts,
            extra_args=extra_args,
            on_poll=report_steps,
            on_output=lambda line: self.progress(f"{label}: {line}"),
        )
        self.launches.append({"variant": label, **result.to_dict()})
        if self.backend is None:
            start = [e for e in self.events(variant).get(0, []) if e.get("event") == "worker_start"]
            if start:
                self.backend = start[0].get("backend")
        if result.status == "cancelled":
            raise LabCancelled(
                f"{label}: cancelled; every process it started was killed", result.root_cause
            )
        if result.status == "timeout":
            raise LabTimeout(f"{label}: deadline passed ({result.root_cause})", result.root_cause)
        if result.status != "ok" and not expect_failure:
            raise LabError(f"{label} failed: {result.root_cause}", result.root_cause)
        outcome = "finished" if result.ok else f"failed as expected ({result.root_cause})"
        self.progress(f"{label} {outcome} in {result.duration_s:.1f} s", advance=1)
        return result

    def events(self, variant: str | None = None) -> dict[int, list[dict[str, Any]]]:
        return read_run_events(self.run_dir(variant))

    def report(self, kind: str, variant: str | None = None) -> dict[str, Any]:
        """The one `kind` event rank 0 wrote (without the event's own bookkeeping fields): how a
        single-report worker hands its measurements to the driver. LabError when there is none
        or more than one."""
        found = [e for e in self.events(variant).get(0, []) if e.get("event") == kind]
        if len(found) != 1:
            raise LabError(f"the worker did not report its result ({len(found)} {kind} events)")
        return {k: v for k, v in found[0].items() if k not in ("event", "rank", "time")}

    # -- verdicts ---------------------------------------------------------------------------
    def observe(self, name: str, value: Any) -> None:
        """Record an observation; dotted names nest (modes.full.max_abs_diff)."""
        target = self.observations
        *parents, leaf = name.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value

    def check(self, name: str, passed: bool, detail: str) -> bool:
        self.checks.append({"name": name, "passed": bool(passed), "detail": detail})
        return bool(passed)
