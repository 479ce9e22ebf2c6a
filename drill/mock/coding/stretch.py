"""Stretch phases after a coding round's 55 minutes: gradient accumulation with no_sync, autocast
with a loss scaler, DDP to FSDP2, a throughput target. Each runs on its own 10-minute clock (scaled
like the round) over the same train.py and is graded by trainer_lab.grading's stretch checks
(`grade(script, out, phases=(id,))`); its state lives in the round's state.json under "stretch",
so a resume goes on. They are offered once the round is over, or chosen up front (`drill mock
--stretch accum,fsdp2`, f9 during the round): the chosen ones then start one after another, in
the order chosen, as the round ends.

    choose(session, ["accum", "fsdp2"]); session.save()  # up front (optional)
    stretch = Stretch.start(session, "accum")      # or Stretch.current(session) after a resume
    stretch.clock.tick(); stretch.save()
    stretch.end()                                   # marks it done
    next_chosen(session)                            # "fsdp2": the next one chosen up front
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


def stretch_minutes(scale: float = 1.0) -> float:
    """A stretch phase's minutes in a round scaled by `scale` (--minutes scales these too)."""
    return STRETCH_MINUTES * scale


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


def parse_choice(text: str) -> list[str]:
    """ "accum,fsdp2" -> ["accum", "fsdp2"] (order kept, repeats dropped); ValueError naming the
    phases there are when a name is not one of them."""
    offered = stretch_phases()
    picked: list[str] = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        if word not in offered:
            names = ", ".join(offered) or "none"
            raise ValueError(f"no stretch phase {word[:40]!r} (there are: {names})")
        if word not in picked:
            picked.append(word)
    if not picked:
        raise ValueError("name at least one stretch phase, e.g. accum,fsdp2")
    return picked


def chosen(session: CodingSession) -> list[str]:
    """The stretch phases chosen up front, in their order (unknown names left out)."""
    found = session.stretch.get("chosen")
    offered = stretch_phases()
    return [p for p in found if p in offered] if isinstance(found, list) else []


def choose(session: CodingSession, phases: list[str]) -> None:
    """Choose stretch phases up front (they replace an earlier choice; session.save() keeps
    them). ValueError for a phase the grader does not offer."""
    for phase_id in phases:
        if phase_id not in stretch_phases():
            raise ValueError(f"no stretch phase {phase_id!r}")
    session.stretch = {**session.stretch, "chosen": list(dict.fromkeys(phases))}


def toggle_chosen(session: CodingSession, phase_id: str) -> list[str]:
    """Add a phase to the end of the up-front choice, or take it off when it is there."""
    picked = chosen(session)
    choose(
        session, [p for p in picked if p != phase_id] if phase_id in picked else [*picked, phase_id]
    )
    return chosen(session)


def next_chosen(session: CodingSession) -> str | None:
    """The first phase chosen up front that has not run yet (None: none left)."""
    finished = done(session)
    return next((p for p in chosen(session) if p not in finished), None)


def remaining_phases(session: CodingSession) -> list[str]:
    """The stretch phases not done yet, offered once the round is over (they extend the DDP
    round's contract: none after a round on another prompt)."""
    if session.prompt.id != "ddp":
        return []
    return [p for p in stretch_phases() if p not in done(session)]


class Stretch:
    """The stretch phase running in a finished round, on its own clock."""

    def __init__(self, session: CodingSession, phase_id: str, state: ClockState | None) -> None:
        self.session = session
        self.phase_id = phase_id
        budget = stretch_minutes(session.scale) * 60.0
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
            **self.session.stretch,
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
