"""A headless clock for a coding round (`drill mock watch`): the round's phase clock, each save of
train.py (or of round.ipynb in a notebook round) seen by polling its modification time, and at
a phase's end what the round's clock rules say (drill.mock.coding.rules) done and told as lines:
the ended phase's grader phases graded (drill.mock.coding.conductor). Entering the pushback
phase grades everything and asks the interviewer's follow-ups about the code
(drill.mock.coding.pushback) one at a time, each on its own clock (drill.mock.coding.
followup_clock): all are appended under ## Q headings to answer there (to notes.md, in a
notebook round as a cell of the notebook), and the next is asked once an answer is saved under
the current one's heading or its time is up; the end
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
from collections.abc import Callable, Iterable
from typing import Any

from drill.mock.clock import RoundClock, Status
from drill.mock.coding.conductor import Grader, Record, RoundGrading, grade_round
from drill.mock.coding.followup_clock import (
    FollowUpClock,
    adopt_probe,
    per_question_seconds,
    requote,
)
from drill.mock.coding.notebook import append_follow_ups
from drill.mock.coding.pushback import (
    answers,
    notes_with_questions,
    pushback_questions,
    question_block,
)
from drill.mock.coding.rules import (
    Effect,
    Grade,
    PhasesEnded,
    Pushback,
    RoundConductor,
    RoundOver,
    StretchOver,
    StretchStarted,
)
from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import contract
from drill.mock.errors import MockError
from drill.mock.report import clock as fmt_clock
from drill.runs.checklist import CheckList, plain_lines
from drill.text import printable

__all__ = ["Grader", "Record", "RoundWatch", "verdict_lines"]


def verdict_lines(result: Any) -> list[str]:
    """A grading's checks as lines: a reason several checks share once (with the checks it
    affects), then PASS/FAIL, the check, its evidence; then the count."""
    return plain_lines(CheckList.of(result))


class RoundWatch:
    """One coding round watched from a terminal: its clock, its file, its gradings."""

    def __init__(
        self,
        session: CodingSession,
        *,
        grade: Grader,
        record: Record | None = None,
        feed_back: Callable[[CodingSession], Iterable[str]] | None = None,
    ) -> None:
        self.session = session
        self.grade = grade
        self.record = record
        self.feed_back = feed_back
        self.watched = session.notebook_path or session.script
        self._stamp = self._mtime()
        self.rules = RoundConductor(session)
        self.followups: FollowUpClock | None = None  # the pushback's questions, one at a time

    # --- reading -------------------------------------------------------------------------------
    @property
    def stretch(self) -> Any:  # -> Stretch | None: the stretch phase after the round, if running
        return self.rules.stretch

    @property
    def finished(self) -> bool:
        """The round is over and no stretch phase runs."""
        return self.rules.over

    @property
    def clock(self) -> RoundClock:
        """The clock that runs now: the stretch phase's while one runs, else the round's."""
        return self.rules.clock

    def status_line(self, *, seconds: bool = True) -> str:
        """ "Phase 2/5 Distributed lift · 12:04 left · total 37:04 left" (minutes only without
        `seconds`, for a log that gets a line only when it changes)."""
        clock = self.session.clock
        number, count = clock.phase + 1, len(self.session.phases)
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
        asked = self.followups
        if asked is not None and not asked.finished:
            line += f" · Q{asked.number} {left(asked.remaining_s())} left"
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
        prompt = self.session.prompt
        if prompt.id != "ddp":  # today's round needs no word; another prompt is named
            lines.append(f"Prompt: {prompt.title} (drill mock contract --prompt {prompt.id})")
        return [printable(line) for line in lines]

    def step(self) -> list[str]:
        """Charge the time since the last step; report saves seen and grade the phases that
        ended (the round's end grades everything)."""
        lines = self._saves()
        for effect in self.rules.react(self.clock.tick()):
            lines += self._apply(effect)
        return lines + self._next_followup()

    def pause(self) -> None:
        """Stop the clock and save it (a later `drill mock watch` or the TUI resumes it)."""
        self.clock.pause()
        self._save()

    def _save(self) -> None:
        if self.rules.stretch is not None:
            self.rules.stretch.save()
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

    def _apply(self, effect: Effect) -> list[str]:
        """An effect of the round's clock rules, done here and told as lines."""
        if isinstance(effect, PhasesEnded):
            return [f"Phase {i + 1} ended: {self.session.phases[i].title}" for i in effect.phases]
        if isinstance(effect, RoundOver):
            return [f"Time is up: the round is over: {effect.grading}."]
        if isinstance(effect, Pushback):
            lines = ["Pushback: grading everything; the follow-up questions come from it."]
            return lines + self._grade(effect.phases) + self._ask()
        if isinstance(effect, Grade):
            lines = self._grade(effect.phases)
            return lines + (self._fed_back() if effect.feed_back else [])
        if isinstance(effect, StretchOver):
            return [f"Stretch phase over: {effect.title}"]
        if isinstance(effect, StretchStarted):
            return self._stretch_started()
        return []  # an alarm: the status line says it

    def _stretch_started(self) -> list[str]:
        """The stretch phase chosen up front that starts now: its contract."""
        stretch = self.rules.stretch
        assert stretch is not None
        minutes = fmt_clock(stretch.clock.phase_remaining_s())
        head = f"Stretch phase (chosen up front): {stretch.title}, {minutes} on its clock"
        return [printable(line) for line in (head, *contract(stretch.phase_id).splitlines())]

    def _fed_back(self) -> list[str]:
        if self.feed_back is None:
            return []
        fed = list(self.feed_back(self.session))  # one line per card: what changed
        return ["Fed back to review:", *(f"  {line}" for line in fed)] if fed else []

    def _ask(self) -> list[str]:
        """The pushback's follow-ups (from the full grading's evidence, else from the code),
        appended once under their ## Q headings (to notes.md; in a notebook round as the
        notebook's last cell, the notebook the user has open), and printed."""
        questions = pushback_questions(self.session, from_code=True)
        if not questions:
            return []
        where = "your grading's evidence" if self.session.pushback_from is not None else "your code"
        budget = self.session.clock.budgets_s[self.session.pushback_index]
        each = per_question_seconds(budget, len(questions))
        self.followups = FollowUpClock(questions, each, self.session.now)
        self.followups.start()
        lines = [f"The interviewer asks (from {where}), one question at a time, "
                 f"{fmt_clock(each)} each:", *self._asked_now()]  # fmt: skip
        notebook = self.session.notebook_path
        if notebook is not None:  # the notebook the user is looking at: the one place
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
        updated = notes_with_questions(notes, questions)
        if updated != notes:  # once: a resume adds no second block
            self.session.save(notes=updated)
        lines.append(f"Answer each under its ## Q heading in {self.session.notes_path}")
        return [printable(line) for line in lines]

    def _asked_now(self) -> list[str]:
        asked = self.followups
        if asked is None or asked.finished:
            return []
        return [printable(f"Q{asked.number}. {asked.question}")]

    def _next_followup(self) -> list[str]:
        """The next question once the current one has an answer saved under its heading, or
        once its time is up (drill.mock.coding.followup_clock); its clock stops with the
        round's."""
        asked = self.followups
        if asked is None or asked.finished or self.session.finished:
            return []
        if self.session.clock.status is Status.PAUSED:
            asked.pause()
            return []
        asked.start()
        written = answers(self.session.notes(), len(asked.questions))[asked.index]
        if written.strip():
            done = asked.submit(written)
            said = f"Answer to Q{done.number if done else '?'} saved."
        else:
            timed_out = asked.tick(written)
            if not timed_out:
                return []
            done, said = timed_out[0], f"Time is up for Q{timed_out[0].number}."
        if done is not None and self._adopt_probe(done.number):
            said += f" Q{done.number + 1} builds on that answer."
        return [said, *(self._asked_now() or ["That was the last question."])]

    def _adopt_probe(self, number: int) -> bool:
        """Keep the questions when answer `number` drew a probe (followup_clock.adopt_probe),
        and quote it under its heading in notes.md (a notebook round keeps its cell as is: the
        question is printed here)."""
        assert self.followups is not None
        probe = adopt_probe(self.session, self.followups, number)
        if probe is None:
            return False
        if self.session.notebook_path is None:
            self.session.save(notes=requote(self.session.notes_file(), number + 1, probe))
        else:
            self.session.save()
        return True

    def _grade(self, phases: tuple[str, ...]) -> list[str]:
        graded = grade_round(self.session, phases, grader=self.grade, record=self.record)
        return grading_lines(graded)


def grading_lines(graded: RoundGrading) -> list[str]:
    """A round's grading told as lines: what ran (or stands), then its verdicts."""
    lines = [f"Grading {', '.join(graded.phases)} ..."]
    if graded.notebook_problem:
        lines.append(printable(f"Notebook not read: {graded.notebook_problem}"))
    if graded.error is not None:
        return [*lines, printable(f"Grading failed: {graded.error}")]
    if graded.reused:
        lines[0] = f"train.py is unchanged since grading {graded.number}: its verdicts stand."
    lines += verdict_lines(graded.result)
    return lines + [printable(line) for line in graded.notices]
