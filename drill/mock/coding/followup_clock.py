"""The pushback's follow-ups asked one at a time, each on its own clock (UI-free; the screen and
`drill mock watch` show it, each in its own words).

The rules, one copy each:
- Order: the round's questions in their order (drill.mock.coding.pushback keeps them); a
  question already answered in the notes is not asked again (a resumed round goes on at the
  first unanswered one).
- Time per question: the pushback phase's budget shared by the questions, so it scales with
  the round (a 55-minute round with five questions: 3 minutes each), never under MIN_SECONDS.
- Submit: the answer typed is kept and the next question starts on a fresh clock; when the
  answer names a design choice, the next question probes it instead
  (drill.mock.coding.followup_probes: `built_on` is then the answered question's number, and
  the caller keeps the new questions and requotes the notes' heading).
- Timeout: what was typed by then is kept as the answer (nothing typed: the question stays
  unanswered and rates nothing), and the next question starts.
- Pause: the question's clock stops with the round's clock.
- The answers go to notes.md under each question's `## Q<n>` heading (answer_into_notes), where
  the report reads them (drill.mock.coding.pushback.answers).

    clock = FollowUpClock(questions, per_question_seconds(budget_s, len(questions)), now)
    clock.start()
    for event in clock.tick(typed):      # Answered(number, text, timed_out=True) when time is up
        notes = answer_into_notes(notes, questions, event)
    event = clock.submit(typed)        # the next question starts on a fresh clock
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drill.mock.coding.followup_probes import build_on
from drill.mock.coding.pushback import HEADING, SECTION_END, notes_with_questions

if TYPE_CHECKING:
    from drill.mock.coding.session import CodingSession

MIN_SECONDS = 60.0


def per_question_seconds(pushback_budget_s: float, count: int) -> float:
    """Each question's time: the pushback's budget shared by `count` questions, at least
    MIN_SECONDS."""
    return max(MIN_SECONDS, pushback_budget_s / max(1, count))


@dataclass(frozen=True)
class Answered:
    """Question `number` (1-based) is over: answered in time, or its time ran out."""

    number: int
    text: str
    timed_out: bool = False


class FollowUpClock:
    """The follow-ups one at a time: which one is asked now and how long it has left."""

    def __init__(
        self,
        questions: Sequence[Mapping[str, Any]],
        per_question_s: float,
        now: Callable[[], float] = time.monotonic,
        answered: Sequence[str] = (),
    ) -> None:
        self.questions = list(questions)
        self.per_question_s = per_question_s
        self.now = now
        done = [bool(text.strip()) for text in answered]
        self.index = next(
            (i for i in range(len(self.questions)) if i >= len(done) or not done[i]),
            len(self.questions),
        )
        self._started: float | None = None  # when the current question's clock last ran
        self._used = 0.0  # its time used before that
        self.paused = False
        self.built_on: int | None = None  # the last answer drew a probe: its question's number

    # --- reading -------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.index >= len(self.questions)

    @property
    def number(self) -> int | None:
        """The question asked now (1-based), None once all were asked."""
        return None if self.finished else self.index + 1

    @property
    def question(self) -> str:
        if self.finished:
            return ""
        return " ".join(str(self.questions[self.index].get("question", "")).split())

    def used_s(self) -> float:
        running = 0.0 if self._started is None else self.now() - self._started
        return self._used + running

    def remaining_s(self) -> float:
        return 0.0 if self.finished else max(0.0, self.per_question_s - self.used_s())

    # --- driving -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or resume) the current question's clock."""
        if not self.finished and self._started is None:
            self._started = self.now()
            self.paused = False

    def pause(self) -> None:
        if self._started is not None:
            self._used += self.now() - self._started
            self._started = None
            self.paused = True

    def tick(self, typed: str) -> list[Answered]:
        """The question whose time ran out (with `typed` as its answer), when it did."""
        if self.finished or self._started is None or self.remaining_s() > 0:
            return []
        return [self._next(typed, timed_out=True)]

    def submit(self, typed: str) -> Answered | None:
        """The current question answered with `typed`; None once all were asked."""
        if self.finished:
            return None
        return self._next(typed, timed_out=False)

    def _next(self, typed: str, *, timed_out: bool) -> Answered:
        done = Answered(self.index + 1, typed.strip(), timed_out)
        rebuilt = build_on(self.questions, done.number, done.text)
        self.built_on = None if rebuilt is None else done.number
        if rebuilt is not None:
            self.questions = rebuilt
        self.index += 1
        running = self._started is not None
        self._started, self._used = None, 0.0
        if running:
            self.start()
        return done


def answer_into_notes(notes: str, questions: Sequence[Mapping[str, Any]], answer: Answered) -> str:
    """The notes with `answer` under its `## Q<n>` heading (after the quoted question; the
    question block is added first when the notes lack it), in place of what was there; the
    notes as they were when nothing was typed."""
    notes = notes_with_questions(notes, [dict(q) for q in questions])
    lines = notes.split("\n")
    start = next(
        (i for i, line in enumerate(lines)
         if (m := HEADING.match(line)) and int(m.group(1)) == answer.number),
        None,
    )  # fmt: skip
    if start is None:
        return notes
    body = start + 1
    while body < len(lines) and lines[body].lstrip().startswith(">"):
        body += 1
    end = body
    while end < len(lines) and not SECTION_END.match(lines[end]):
        end += 1
    if not answer.text:  # nothing typed: the question stays unanswered
        return notes
    return "\n".join([*lines[:body], answer.text, "", *lines[end:]])


def requote(notes: str, number: int, question: Mapping[str, Any]) -> str:
    """The notes with question `number`'s heading and quoted question replaced by `question`'s
    (a probe took its place, drill.mock.coding.followup_probes); what is written under it is
    kept; the notes as they were when they have no such heading."""
    lines = notes.split("\n")
    at = next(
        (i for i, line in enumerate(lines)
         if (m := HEADING.match(line)) and int(m.group(1)) == number),
        None,
    )  # fmt: skip
    if at is None:
        return notes
    end = at + 1
    while end < len(lines) and lines[end].lstrip().startswith(">"):
        end += 1
    text = " ".join(str(question.get("question", "")).split())
    heading = f"## Q{number} ({question.get('source_check', '')})"
    return "\n".join([*lines[:at], heading, f"> {text}", *lines[end:]])


def adopt_probe(
    session: CodingSession, asked: FollowUpClock, number: int
) -> Mapping[str, Any] | None:
    """When the answer to question `number` drew a probe (asked.built_on), the round's questions
    become the clock's (kept in the round's state on its next save, so a resume asks the same)
    and the probe is returned, for requote(); else None."""
    if asked.built_on != number or number >= len(asked.questions):
        return None
    session.pushback = [dict(q) for q in asked.questions]
    return asked.questions[number]
