"""The coding round's pushback: follow-up questions about the candidate's own code.

Words: a follow-up is one question (drill.mock.coding.followups makes them from a grading and
the code); "pushback" is the round phase that asks them, and the name under which a round's
state.json keeps them (`session.pushback`, a stored key old rounds have: not renamed).

The questions come from drill.mock.coding.followups: from the full grading's evidence when one
has run (failed checks quoted, what-ifs about the script's own design), from the code alone
before that.
They are chosen once per round and kept in its state.json, so a resume asks the same. Each is
answered in the notes under its own heading, which `question_block` appends:

    ## Q1 (restart.resumes_at_checkpoint)
    > rank 1 was killed after step 9 and your run started again at step 0; ...

    <the answer: everything up to the next `## ` heading, the quoted `>` lines left out>

    questions = pushback_questions(session)     # [] while no full grading exists yet
    questions = pushback_questions(session, from_code=True)   # the code's, when none will come
    notes = notes_with_questions(notes, questions)   # after one empty line, once
    answers(notes, len(questions))              # the answer text per question
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from drill.mock.coding.regrade import GRADES_DIR, gradings, is_full
from drill.mock.coding.session import CodingSession, read_text
from trainer_lab.grading import PHASES

HEADING = re.compile(r"^## Q(\d+)\b")
SECTION_END = re.compile(r"^#{1,2} ")


def full_grading(folder: Path, phases: Iterable[str] = PHASES) -> tuple[int, dict[str, Any]] | None:
    """The latest grading of the round that ran every grader phase (`phases`, the round's
    prompt's): (its number, its result)."""
    found = gradings(folder)
    full = [(number, dict(result)) for number, result in found if is_full(result, phases)]
    return full[-1] if full else None


def graded_source(folder: Path, number: int) -> str | None:
    """The train.py that grading `number` ran (the grader's workspace copy; the script ran
    there and may have left anything in its place: read with a bound)."""
    return read_text(folder / GRADES_DIR / str(number) / "workspace" / "train.py")


def pushback_questions(session: CodingSession, *, from_code: bool = False) -> list[dict[str, Any]]:
    """The round's follow-ups: the saved ones; else chosen from the latest full grading and the
    code it graded; else, with `from_code`, from the code alone; else [] (none yet)."""
    if session.pushback:
        return session.pushback
    found = full_grading(session.folder, session.all_grader_phases)
    if found is not None:
        number, result = found
        source = graded_source(session.folder, number)
        return choose_followups(
            session, result, session.code() if source is None else source, number
        )
    return choose_followups(session, None, session.code()) if from_code else []


def choose_followups(
    session: CodingSession,
    result: Mapping[str, Any] | None,
    source: str,
    grading: int | None = None,
) -> list[dict[str, Any]]:
    """The round's follow-up questions (FollowUp.to_dict()); chosen from `result` (None: from
    the code alone) and saved on the first call, the saved ones afterwards."""
    if session.pushback:
        return session.pushback
    from drill.mock.coding.followups import follow_ups

    questions = follow_ups(result if result is not None else {}, source, session.prompt)
    session.pushback = [q.to_dict() for q in questions]
    session.pushback_from = grading if result is not None else None
    session.save()
    return session.pushback


def question_block(questions: list[dict[str, Any]]) -> str:
    """The notes' answer area: a `## Q<n>` heading per question, the question quoted below it,
    then an empty line to answer on."""
    parts = []
    for number, q in enumerate(questions, 1):
        text = " ".join(str(q.get("question", "")).split())
        parts.append(f"## Q{number} ({q.get('source_check', '')})\n> {text}\n\n\n")
    return "".join(parts)


def has_block(notes: str) -> bool:
    return any(HEADING.match(line) for line in notes.splitlines())


def notes_with_questions(notes: str, questions: list[dict[str, Any]]) -> str:
    """The notes with the questions' block (question_block) appended after one empty line; the
    notes unchanged when they have a block already (a resume adds no second one)."""
    if has_block(notes):
        return notes
    lead = "\n" if notes.endswith("\n") else "\n\n"
    return notes + ("" if not notes or notes.endswith("\n\n") else lead) + question_block(questions)


def without_questions(notes: str) -> str:
    """The notes without the quoted questions under the `## Q<n>` headings: what the user
    wrote (the talk track's rubric gives no credit for words the interviewer said)."""
    kept, inside = [], False
    for line in notes.splitlines():
        if HEADING.match(line):
            inside = True
        elif SECTION_END.match(line):
            inside = False
        if not (inside and line.lstrip().startswith(">")):
            kept.append(line)
    return "\n".join(kept)


def answers(notes: str, count: int) -> list[str]:
    """Per question (1..count), the answer written under its `## Q<n>` heading ("" when there
    is none): the lines up to the next heading, the quoted question lines left out."""
    found: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in notes.splitlines():
        heading = HEADING.match(line)
        if heading:
            current = found.setdefault(int(heading.group(1)), [])
        elif SECTION_END.match(line):
            current = None
        elif current is not None and not line.lstrip().startswith(">"):
            current.append(line)
    return ["\n".join(found.get(n, [])).strip() for n in range(1, count + 1)]
