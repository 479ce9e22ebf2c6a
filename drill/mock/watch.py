"""A headless clock for a coding round (`drill mock watch`): the round's phase clock, each save of
train.py (or of round.ipynb in a notebook round) seen by polling its modification time, and at
each phase's end that phase's grader phases graded and their verdicts given as lines. Entering
the pushback phase grades everything and asks the interviewer's follow-ups about the code
(drill.mock.coding.pushback), appended under ## Q headings to answer there (to notes.md, in a
notebook round as a cell of the notebook); the end
grades everything again unless train.py is unchanged since (drill.mock.coding.regrade). A
stretch phase started after the round (drill.mock.coding.stretch) runs on its own clock here too,
and the stretch phases chosen up front (`drill mock notebook --stretch accum,fsdp2`) start one
after another, in that order, as the round ends.

UI-free and torch-free: the grader and the clock's time source are passed in, so tests drive a
round with a fake clock and a fake grader. The CLI (drill/cli/mock_watch.py) loops over step().

    watch = RoundWatch(session, grade=trainer_lab.grading.grade)
    lines = watch.start()
    while not watch.finished:
        lines = watch.step()           # the clock, saves seen, gradings at phase ends
        show(watch.status_line())
    watch.pause()                      # ctrl+c: the clock paused and saved
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from drill.mock.clock import Event, PhaseAdvanced, RoundClock, RoundFinished, Status
from drill.mock.coding.regrade import end_grading_text, remember_source, unchanged_full_grading
from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.coding.stretch import Stretch, contract, next_chosen
from drill.mock.report import clock as fmt_clock
from drill.paths import new_numbered_dir
from drill.text import printable
from trainer_lab.usercode.verdict import shared_reasons

# grade(script, out_dir, phases) -> the grading's result.json as a mapping (trainer_lab.grading)
Grade = Callable[[Path, Path, tuple[str, ...]], Mapping[str, Any]]
# record(result, out_dir): after each grading (the run log; a failure is the callee's notice)
Record = Callable[[Mapping[str, Any], Path], Iterable[str]]
GRADES_DIR = "grades"
ALL_GRADER_PHASES = CODING_PHASES[-1].grades
PUSHBACK = len(CODING_PHASES) - 1


def _grader_phases(ended: Iterable[int]) -> tuple[str, ...]:
    """The grader phases of the round phases that ended, each once, in the contract's order."""
    wanted = {g for i in ended for g in CODING_PHASES[i].grades}
    return tuple(g for g in CODING_PHASES[-1].grades if g in wanted)


def verdict_lines(result: Mapping[str, Any]) -> list[str]:
    """A grading's checks as lines: a reason several checks share once (with the checks it
    affects), then PASS/FAIL, the check, its evidence; then the count."""
    reasons, checks = shared_reasons(result)
    width = max((len(c["name"]) for c in checks), default=0)
    lines = []
    for reason in reasons:
        lines.append(printable(f"  {reason.label}: {' '.join(reason.text.split())}"))
        lines.append(printable(f"    {reason.affects}"))
    for check in checks:
        verdict = "PASS" if check.get("passed") else "FAIL"
        detail = " ".join(str(check.get("detail", "")).split())
        lines.append(printable(f"  {verdict}  {check.get('name', '')!s:<{width}}  {detail}"))
    held = sum(1 for c in checks if c.get("passed"))
    lines.append(f"  {held}/{len(checks)} checks hold")
    return lines


class RoundWatch:
    """One coding round watched from a terminal: its clock, its file, its gradings."""

    def __init__(
        self,
        session: CodingSession,
        *,
        grade: Grade,
        record: Record | None = None,
        feed_back: Callable[[CodingSession], Iterable[str]] | None = None,
    ) -> None:
        self.session = session
        self.grade = grade
        self.record = record
        self.feed_back = feed_back
        self.watched = session.notebook_path or session.script
        self._stamp = self._mtime()
        self.stretch = Stretch.current(session)  # a stretch phase after the round, when running

    # --- reading -------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """The round is over and no stretch phase runs."""
        return self.session.finished and self.stretch is None

    @property
    def clock(self) -> RoundClock:
        """The clock that runs now: the stretch phase's while one runs, else the round's."""
        return self.stretch.clock if self.stretch is not None else self.session.clock

    def status_line(self, *, seconds: bool = True) -> str:
        """ "Phase 2/5 Distributed lift · 12:04 left · total 37:04 left" (minutes only without
        `seconds`, for a log that gets a line only when it changes)."""
        clock = self.session.clock
        number, count = clock.phase + 1, len(CODING_PHASES)
        if self.finished:
            return f"Round over ({clock.state.finish_reason or 'ended'})"

        def left(s: float) -> str:
            return fmt_clock(s) if seconds else f"{max(0, int(s // 60))} min"

        if self.stretch is not None:
            line = f"Stretch: {self.stretch.title} · {left(self.clock.phase_remaining_s())} left"
            return line + (" · PAUSED" if self.clock.status is Status.PAUSED else "")
        line = (
            f"Phase {number}/{count} {self.session.phase.title} · "
            f"{left(clock.phase_remaining_s())} left · total {left(clock.total_remaining_s())} left"
        )
        return line + (" · PAUSED" if clock.status is Status.PAUSED else "")

    # --- driving -------------------------------------------------------------------------------
    def start(self) -> list[str]:
        """Start (or resume) the clock; lines saying what is watched and how it is graded."""
        clock = self.clock
        resumed = clock.total_used_s() > 0
        clock.start()
        self._save()
        what = "round.ipynb's %%writefile train.py cell" if self.session.notebook_path else ""
        which = f"coding round {self.session.round_id}"
        if self.stretch is not None:
            which = f"stretch phase {self.stretch.title} of {which}"
        lines = [
            f"{'Resumed' if resumed else 'Started'} {which}: {self.session.folder}",
            f"Edit {self.watched}{f' ({what})' if what else ''} and save; each phase's checks "
            "run when it ends. ctrl+c pauses the clock.",
        ]
        return [printable(line) for line in lines]

    def step(self) -> list[str]:
        """Charge the time since the last step; report saves seen and grade the phases that
        ended (the round's end grades everything)."""
        lines = self._saves()
        events = self.clock.tick()
        lines += self._after_stretch(events) if self.stretch is not None else self._after(events)
        return lines

    def pause(self) -> None:
        """Stop the clock and save it (a later `drill mock watch` or the TUI resumes it)."""
        self.clock.pause()
        self._save()

    def _save(self) -> None:
        if self.stretch is not None:
            self.stretch.save()
        else:
            self.session.save()

    # --- internals -----------------------------------------------------------------------------
    def _mtime(self) -> int | None:
        try:
            return os.stat(self.watched).st_mtime_ns
        except OSError:
            return None

    def _saves(self) -> list[str]:
        stamp = self._mtime()
        if stamp == self._stamp:
            return []
        self._stamp = stamp
        if stamp is None:
            return [printable(f"{self.watched.name} is gone; the last train.py read stays")]
        if self.session.notebook_path is None:
            return [f"Saved: {self.watched.name} ({len(self.session.code().splitlines())} lines)"]
        problem = self.session.sync_from_notebook()
        if problem:
            return [printable(f"Saved: {self.watched.name}, but not read: {problem}")]
        lines = len(self.session.code().splitlines())
        return [f"Saved: {self.watched.name} -> train.py ({lines} lines)"]

    def _after(self, events: list[Event]) -> list[str]:
        ended = [e.previous for e in events if isinstance(e, PhaseAdvanced)]
        finished = any(isinstance(e, RoundFinished) for e in events)
        if finished:
            ended.append(self.session.clock.phase)
        if not ended:
            return []
        for index in ended:
            self.session.snapshot(index)
        self.session.save()
        lines = []
        for index in ended:
            lines.append(f"Phase {index + 1} ended: {CODING_PHASES[index].title}")
        pushback = not finished and self.session.clock.phase == PUSHBACK
        if finished:
            lines.append(f"Time is up: the round is over: {end_grading_text(self.session)}.")
        elif pushback:
            lines.append("Pushback: grading everything; the follow-up questions come from it.")
        phases = _grader_phases(range(len(CODING_PHASES)) if finished or pushback else ended)
        if phases:
            lines += self._grade(phases)
        if pushback:
            lines += self._ask()
        if finished and self.feed_back is not None:
            fed = list(self.feed_back(self.session))  # one line per card: what changed
            if fed:
                lines += ["Fed back to review:", *(f"  {line}" for line in fed)]
        if finished:
            lines += self._next_chosen()
        return lines

    def _next_chosen(self) -> list[str]:
        """Start the next stretch phase chosen up front, when one is left: its contract."""
        phase_id = next_chosen(self.session)
        if phase_id is None:
            return []
        self.stretch = Stretch.start(self.session, phase_id)
        minutes = fmt_clock(self.stretch.clock.phase_remaining_s())
        head = f"Stretch phase (chosen up front): {self.stretch.title}, {minutes} on its clock"
        return [printable(line) for line in (head, *contract(phase_id).splitlines())]

    def _after_stretch(self, events: list[Event]) -> list[str]:
        stretch = self.stretch
        if stretch is None or not any(isinstance(e, RoundFinished) for e in events):
            return []
        stretch.end()  # saved as done, with its code
        self.stretch = None
        lines = [f"Stretch phase over: {stretch.title}", *self._grade((stretch.phase_id,))]
        return lines + self._next_chosen()

    def _ask(self) -> list[str]:
        """The pushback's follow-ups (from the full grading's evidence, else from the code),
        appended once under their ## Q headings (to notes.md; in a notebook round as the
        notebook's last cell, the notebook the user has open), and printed."""
        from drill.mock.coding.pushback import has_block, pushback_questions, question_block

        questions = pushback_questions(self.session, from_code=True)
        if not questions:
            return []
        where = "your grading's evidence" if self.session.pushback_from is not None else "your code"
        lines = [f"The interviewer asks (from {where}):"]
        lines += [f"Q{i}. {' '.join(str(q.get('question', '')).split())}"
                  for i, q in enumerate(questions, 1)]  # fmt: skip
        notebook = self.session.notebook_path
        if notebook is not None:  # the notebook the user is looking at: the one place
            from drill.mock.errors import MockError
            from drill.mock.notebook import append_follow_ups

            try:
                append_follow_ups(notebook, question_block(questions))
            except MockError as error:
                lines.append(f"Not added to the notebook: {' '.join(str(error).split())}")
            lines.append(
                f"Answer each under its ## Q heading in the notebook's Follow-up questions cell "
                f"(its last): {notebook}"
            )
            return [printable(line) for line in lines]
        notes = self.session.notes_file()
        if not has_block(notes):
            lead = (
                ""
                if not notes or notes.endswith("\n\n")
                else ("\n" if notes.endswith("\n") else "\n\n")
            )
            self.session.save(notes=notes + lead + question_block(questions))
        lines.append(f"Answer each under its ## Q heading in {self.session.notes_path}")
        return [printable(line) for line in lines]

    def _grade(self, phases: tuple[str, ...]) -> list[str]:
        lines = [f"Grading {', '.join(phases)} ..."]
        if self.session.notebook_path is not None:  # the notebook as last saved is graded
            problem = self.session.sync_from_notebook()
            if problem:
                lines.append(printable(f"Notebook not read: {problem}"))
        if self.session.finished and set(phases) == set(ALL_GRADER_PHASES):
            reused = unchanged_full_grading(self.session)
            if reused is not None:  # the pushback's grading ran this very file
                number, result = reused
                lines[0] = f"train.py is unchanged since grading {number}: its verdicts stand."
                return lines + verdict_lines(result)
        source = self.session.code()
        try:
            out_dir = new_numbered_dir(self.session.folder / GRADES_DIR)  # this grading's alone
            result = self.grade(self.session.script, out_dir, phases)
        except Exception as error:  # the user's file or the grader: a line, and the clock goes on
            return [*lines, printable(f"Grading failed: {type(error).__name__}: {error}")]
        remember_source(out_dir, source)
        lines += verdict_lines(result)
        if self.record is not None:
            lines += [printable(line) for line in self.record(result, out_dir)]
        return lines
