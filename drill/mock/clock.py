"""The round state machine: phase budgets, a soft alarm per phase, advance, pause, hard stop.

Time comes from an injected monotonic clock (`now() -> seconds`): tests drive it, no sleeping.
Time is charged to the current phase only while running; when a phase's budget runs out its alarm
fires once and, with auto-advance, the surplus is carried into the next phase (a late tick after a
laptop sleep therefore charges every phase exactly its budget). The whole round stops hard when the
total budget is used, whatever phase it is in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


@dataclass(frozen=True)
class PhaseAlarm:
    """The phase's budget is used up (a soft alarm: notice and colour)."""

    phase: int


@dataclass(frozen=True)
class PhaseAdvanced:
    previous: int
    phase: int
    reason: str  # "key" | "auto"


@dataclass(frozen=True)
class RoundFinished:
    reason: str  # "time" (hard stop) | "completed" (advanced past the last phase) | "ended"


Event = PhaseAlarm | PhaseAdvanced | RoundFinished


@dataclass
class ClockState:
    """What is persisted (autosave) and restored on resume."""

    phase: int = 0
    used_s: list[float] = field(default_factory=list)
    alarmed: list[int] = field(default_factory=list)
    status: Status = Status.PAUSED
    finish_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "used_s": list(self.used_s),
            "alarmed": list(self.alarmed),
            "status": str(self.status),
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClockState:
        return cls(
            phase=int(data["phase"]),
            used_s=[float(x) for x in data["used_s"]],
            alarmed=[int(x) for x in data["alarmed"]],
            status=Status(data["status"]),
            finish_reason=data.get("finish_reason"),
        )


class RoundClock:
    def __init__(
        self,
        budgets_s: list[float],
        *,
        auto_advance: bool = True,
        now: Callable[[], float] = time.monotonic,
        state: ClockState | None = None,
    ) -> None:
        if not budgets_s or any(b <= 0 for b in budgets_s):
            raise ValueError("every phase needs a positive budget")
        self.budgets_s = list(budgets_s)
        self.auto_advance = auto_advance
        self._now = now
        self.state = state or ClockState(used_s=[0.0] * len(budgets_s))
        if len(self.state.used_s) != len(budgets_s):
            raise ValueError("saved state does not match the round's phases")
        if self.state.status is Status.RUNNING:
            # A restored round was interrupted: the time while it was not running is not charged.
            self.state.status = Status.PAUSED
        self._anchor = now()

    # --- reading -------------------------------------------------------------------------------
    @property
    def status(self) -> Status:
        return self.state.status

    @property
    def phase(self) -> int:
        return self.state.phase

    @property
    def total_budget_s(self) -> float:
        return sum(self.budgets_s)

    def phase_remaining_s(self) -> float:
        """Negative once the phase overruns (only possible without auto-advance)."""
        return self.budgets_s[self.phase] - self.state.used_s[self.phase]

    def total_used_s(self) -> float:
        return sum(self.state.used_s)

    def total_remaining_s(self) -> float:
        """With auto-advance, what the schedule has left: this phase's rest plus the later phases'
        budgets (time left in a phase skipped with a key is not banked), so the total clock
        always agrees with the phase clock. Without it, the total budget less the time used."""
        if self.status is Status.FINISHED:
            return 0.0
        if self.auto_advance:
            return max(0.0, self.phase_remaining_s()) + sum(self.budgets_s[self.phase + 1 :])
        return max(0.0, self.total_budget_s - self.total_used_s())

    def overrun(self) -> bool:
        return self.phase in self.state.alarmed

    # --- driving -------------------------------------------------------------------------------
    def start(self) -> list[Event]:
        """Start or resume the clock."""
        if self.status is Status.FINISHED:
            return []
        self._anchor = self._now()
        self.state.status = Status.RUNNING
        return []

    resume = start

    def pause(self) -> list[Event]:
        events = self.tick()
        if self.status is Status.RUNNING:
            self.state.status = Status.PAUSED
        return events

    def toggle_pause(self) -> list[Event]:
        return self.pause() if self.status is Status.RUNNING else self.start()

    def tick(self) -> list[Event]:
        """Charge the time since the last call and report what happened."""
        now = self._now()
        delta, self._anchor = max(0.0, now - self._anchor), now
        if self.status is not Status.RUNNING:
            return []
        return self._charge(delta)

    def advance(self) -> list[Event]:
        """Move to the next phase by key; past the last phase the round is completed."""
        events = self.tick()
        if self.status is Status.FINISHED:
            return events
        return events + self._next_phase("key")

    def finish(self, reason: str = "ended") -> list[Event]:
        events = self.tick()
        if self.status is Status.FINISHED:
            return events
        return [*events, self._finish(reason)]

    # --- internals -----------------------------------------------------------------------------
    def _charge(self, delta: float) -> list[Event]:
        events: list[Event] = []
        last = len(self.budgets_s) - 1
        while self.status is Status.RUNNING:
            phase_left = self.phase_remaining_s()
            if self.phase not in self.state.alarmed and phase_left <= delta:
                self.state.alarmed.append(self.phase)
                if self.auto_advance and self.phase != last:
                    self.state.used_s[self.phase] += max(0.0, phase_left)
                    delta -= max(0.0, phase_left)
                    events.append(PhaseAlarm(self.phase))
                    events.extend(self._next_phase("auto"))
                    continue
                if self.auto_advance:  # the last phase's time is up: so is the round's
                    self.state.used_s[self.phase] += max(0.0, phase_left)
                    events.append(PhaseAlarm(self.phase))
                    events.append(self._finish("time"))
                    break
                events.append(PhaseAlarm(self.phase))
                # Without auto-advance (or in the last phase) the phase runs on, overrunning.
            step = min(delta, self.total_budget_s - self.total_used_s())
            self.state.used_s[self.phase] += step
            if self.total_used_s() >= self.total_budget_s:
                events.append(self._finish("time"))
            break
        return events

    def _next_phase(self, reason: str) -> list[Event]:
        if self.phase == len(self.budgets_s) - 1:
            return [self._finish("completed" if reason == "key" else "time")]
        previous = self.phase
        self.state.phase += 1
        return [PhaseAdvanced(previous, self.phase, reason)]

    def _finish(self, reason: str) -> RoundFinished:
        self.state.status = Status.FINISHED
        self.state.finish_reason = reason
        return RoundFinished(reason)
