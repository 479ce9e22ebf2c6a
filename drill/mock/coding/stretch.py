"""Stretch phases after a coding round's 55 minutes: gradient accumulation with no_sync, autocast
with a loss scaler, DDP to FSDP2, a throughput target. Each runs on its own 10-minute clock over
the same train.py and is graded by trainer_lab.grading's stretch checks (`grade(script, out,
phases=(id,))`); its state lives in the round's state.json under "stretch", so a resume goes on.

    stretch = Stretch.start(session, "accum")      # or Stretch.current(session) after a resume
    stretch.clock.tick(); stretch.save()
    stretch.end()                                   # marks it done
"""

from __future__ import annotations

from drill.mock.clock import ClockState, RoundClock
from drill.mock.coding.session import CodingSession

STRETCH_MINUTES = 10.0
TITLES = {
    "accum": "Gradient accumulation with no_sync",
    "amp": "Autocast and a loss scaler",
    "fsdp2": "DDP to FSDP2",
    "throughput": "A throughput target in samples/s",
}


def stretch_phases() -> tuple[str, ...]:
    """The stretch phases the grader offers (none from a grader without them)."""
    try:
        from trainer_lab.grading import STRETCH_PHASES
    except ImportError:
        return ()
    return tuple(STRETCH_PHASES)


def contract(phase_id: str) -> str:
    from trainer_lab.grading import stretch_contract

    return stretch_contract(phase_id)


def title(phase_id: str) -> str:
    return TITLES.get(phase_id, phase_id)


def done(session: CodingSession) -> list[str]:
    found = session.stretch.get("done")
    return [p for p in found if isinstance(p, str)] if isinstance(found, list) else []


def used(session: CodingSession) -> dict[str, float]:
    """Stretch phase id -> seconds its clock ran."""
    found = session.stretch.get("used")
    if not isinstance(found, dict):
        return {}
    return {k: float(v) for k, v in found.items() if isinstance(v, int | float)}


def remaining_phases(session: CodingSession) -> list[str]:
    """The stretch phases not done yet, offered once the round is over."""
    return [p for p in stretch_phases() if p not in done(session)]


class Stretch:
    """The stretch phase running in a finished round, on its own clock."""

    def __init__(self, session: CodingSession, phase_id: str, state: ClockState | None) -> None:
        self.session = session
        self.phase_id = phase_id
        budget = STRETCH_MINUTES * 60.0 * session.scale
        try:
            self.clock = RoundClock([budget], now=session.now, state=state)
        except ValueError:
            self.clock = RoundClock([budget], now=session.now)

    @property
    def title(self) -> str:
        return title(self.phase_id)

    @classmethod
    def start(cls, session: CodingSession, phase_id: str) -> Stretch:
        if phase_id not in stretch_phases():
            raise ValueError(f"no stretch phase {phase_id!r}")
        stretch = cls(session, phase_id, None)
        stretch.clock.start()
        stretch.save()
        return stretch

    @classmethod
    def current(cls, session: CodingSession) -> Stretch | None:
        """The stretch phase a saved round was in (its clock paused), or None."""
        phase_id = session.stretch.get("current")
        if not isinstance(phase_id, str) or phase_id not in stretch_phases():
            return None
        state = None
        if isinstance(session.stretch.get("clock"), dict):
            try:
                state = ClockState.from_dict(session.stretch["clock"])
            except (KeyError, TypeError, ValueError):
                state = None
        return cls(session, phase_id, state)

    def save(self, *, ended: bool = False) -> None:
        self.record(ended=ended)
        self.session.save()

    def record(self, *, ended: bool = False) -> None:
        """Put the phase's state into session.stretch (session.save() writes it)."""
        times = used(self.session)
        times[self.phase_id] = self.clock.total_used_s()
        finished = done(self.session)
        if ended and self.phase_id not in finished:
            finished.append(self.phase_id)
        self.session.stretch = {
            "current": None if ended else self.phase_id,
            "clock": None if ended else self.clock.state.to_dict(),
            "done": finished,
            "used": times,
        }

    def end(self) -> None:
        """The phase is over (its time, or the user ended it): saved as done, with the code as
        it stood."""
        self.clock.finish()
        self.session.snapshot_named(self.phase_id)
        self.save(ended=True)
