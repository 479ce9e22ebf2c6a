"""The coding round's clock rules, UI-free: what the round does when its clock says a phase ended,
the pushback began, the round or a stretch phase is over. `RoundConductor.react(events)` keeps
the round's files (the code as each phase ended, the stretch phases' state) and returns effects;
the screen (drill/tui/screens/coding_round.py) and `drill mock watch` (drill.mock.coding.watch)
apply them in order, each in its own words. Neither decides anything itself.

The rules, one copy each:
- A phase whose time ran out is graded by itself: its grader phases run (phases that ran out in
  one tick, after a laptop sleep, in one grading). A phase ended early (f3) is not graded: the
  user moved on by choice, and ctrl+r grades any time.
- Entering the pushback phase grades everything; the interviewer's follow-ups come from it.
- The round's end grades everything (or shows the pushback's grading again when train.py has not
  changed since, drill.mock.coding.regrade), then feeds what it examined back to review, then
  starts the next stretch phase chosen up front, if any.
- A stretch phase's end grades that phase, then starts the next one chosen up front.

    conductor = RoundConductor(session)
    for effect in conductor.react(conductor.clock.tick()):
        apply(effect)              # Alarm, PhasesEnded, Grade, Pushback, RoundOver, Stretch...
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from drill.mock.clock import Event, PhaseAdvanced, PhaseAlarm, RoundClock, RoundFinished
from drill.mock.coding.phases import ALL_GRADER_PHASES, CODING_PHASES, CodingPhase
from drill.mock.coding.regrade import end_grading_text
from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import Stretch, next_chosen


@dataclass(frozen=True)
class Alarm:
    """The phase's time is up (a soft alarm; with auto-advance the phase then ends)."""

    phase: int


@dataclass(frozen=True)
class PhasesEnded:
    """These round phases ended (their code is kept as it stood)."""

    phases: tuple[int, ...]


@dataclass(frozen=True)
class Grade:
    """Grade these grader phases now; `feed_back`: then rate what the finished round examined."""

    phases: tuple[str, ...]
    feed_back: bool = False


@dataclass(frozen=True)
class Pushback:
    """The pushback began: grade these (everything), then ask the follow-ups from it."""

    phases: tuple[str, ...] = ALL_GRADER_PHASES  # the round's prompt's (DDP's by default)


@dataclass(frozen=True)
class RoundOver:
    """The round is over; `grading` says in words what its end does about grading."""

    reason: str
    grading: str


@dataclass(frozen=True)
class StretchStarted:
    """A stretch phase chosen up front started on its own clock."""

    phase_id: str


@dataclass(frozen=True)
class StretchOver:
    phase_id: str
    title: str


Effect = Alarm | PhasesEnded | Grade | Pushback | RoundOver | StretchStarted | StretchOver


def grader_phases(
    ended: Iterable[int], phases: tuple[CodingPhase, ...] = CODING_PHASES
) -> tuple[str, ...]:
    """The grader phases of the round phases that ended (of the time table `phases`), each
    once, in the contract's order."""
    wanted = {g for i in ended for g in phases[i].grades}
    return tuple(g for g in phases[-1].grades if g in wanted)


class RoundConductor:
    """One coding round's rules: its clock (the stretch phase's while one runs) and what each of
    the clock's events leads to."""

    def __init__(self, session: CodingSession) -> None:
        self.session = session
        self.stretch = Stretch.current(session)  # a stretch phase after the round, when running

    @property
    def clock(self) -> RoundClock:
        """The clock that runs now: the stretch phase's while one runs, else the round's."""
        return self.stretch.clock if self.stretch is not None else self.session.clock

    @property
    def over(self) -> bool:
        """The round is over and no stretch phase runs."""
        return self.session.finished and self.stretch is None

    def grade_now(self) -> Grade:
        """ctrl+r: the running stretch phase's checks, else the current phase's (the clarify
        phase has none: the skeleton's); after the end, everything (and the feedback)."""
        if self.stretch is not None:
            return Grade((self.stretch.phase_id,))
        first = next(p.grades for p in self.session.phases if p.grades)
        phases = self.session.phase.grades or first
        return Grade(phases, feed_back=self.session.finished)

    def start_stretch(self, phase_id: str) -> Stretch:
        """Start a stretch phase after the round (picked, or chosen up front)."""
        self.stretch = Stretch.start(self.session, phase_id)
        return self.stretch

    def react(self, events: list[Event]) -> list[Effect]:
        """The effects of the clock's events, in the order to apply them. Call it after saving
        the editor's text: the phases that ended keep train.py as it is on disk."""
        if self.stretch is not None:
            return self._stretch_over(self.stretch) if _finished(events) else []
        effects: list[Effect] = [Alarm(e.phase) for e in events if isinstance(e, PhaseAlarm)]
        advanced = [e for e in events if isinstance(e, PhaseAdvanced)]
        ended = [e.previous for e in advanced]
        finish = next((e for e in events if isinstance(e, RoundFinished)), None)
        if finish is not None:
            ended.append(self.session.clock.phase)
        if not ended:
            return effects
        for index in ended:
            self.session.snapshot(index)
        self.session.save()
        effects.append(PhasesEnded(tuple(ended)))
        if finish is not None:
            grading = end_grading_text(self.session)  # before the end's grading writes
            everything = self.session.all_grader_phases
            effects += [RoundOver(finish.reason, grading), Grade(everything, True)]
            return effects + self._next_chosen()
        if self.session.clock.phase == self.session.pushback_index:
            return [*effects, Pushback(self.session.all_grader_phases)]
        timed_out = grader_phases(
            (e.previous for e in advanced if e.reason == "auto"), self.session.phases
        )
        return effects + ([Grade(timed_out)] if timed_out else [])

    def _stretch_over(self, stretch: Stretch) -> list[Effect]:
        stretch.end()  # saved as done, with its code
        self.stretch = None
        over = StretchOver(stretch.phase_id, stretch.title)
        return [over, Grade((stretch.phase_id,)), *self._next_chosen()]

    def _next_chosen(self) -> list[Effect]:
        phase_id = next_chosen(self.session)
        if phase_id is None:
            return []
        self.start_stretch(phase_id)
        return [StretchStarted(phase_id)]


def _finished(events: list[Event]) -> bool:
    return any(isinstance(e, RoundFinished) for e in events)
