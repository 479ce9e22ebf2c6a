"""The coding round's pushback phase on screen: what the box above the contract says, and the
follow-up questions added to the notes (drill.mock.coding.pushback chooses them)."""

from __future__ import annotations

from textual.widgets import TextArea

from drill.mock.coding.pushback import notes_with_questions, question_block

GRADING_FIRST: tuple = (
    ("Pushback: grading your whole script first", "b"),
    "The interviewer's follow-up questions come from what your code does in it; "
    "they appear here, with an answer heading for each in the notes.",
)


def asked_rows(questions: list[dict], from_grading: bool) -> list:
    """The box's rows: where the questions come from, each question on one line, and where to
    answer them."""
    where = (
        "from your grading's evidence" if from_grading else "from your code (no full grading ran)"
    )
    rows: list = [(f"Pushback: the interviewer asks, {where}", "b")]
    rows += [f"Q{i}. {' '.join(str(q.get('question', '')).split())}" for i, q in
             enumerate(questions, 1)]  # fmt: skip
    rows.append(("They are asked one at a time, each on its own clock; the answers go to the "
                 "notes under each ## Q heading.", "dim"))  # fmt: skip
    return rows


def add_to_notes(notes: TextArea, questions: list[dict]) -> bool:
    """Append a ## Q heading per question to the notes, unless they have them already, and put
    the cursor on Q1's answer line; whether they were added."""
    added = notes_with_questions(notes.text, questions)[len(notes.text) :]
    if not added:
        return False
    notes.insert(added, notes.document.end)
    first = notes.text.splitlines().index(question_block(questions[:1]).splitlines()[0])
    notes.cursor_location = (first + 2, 0)  # Q1's answer line
    notes.scroll_to(y=first, animate=False)
    return True
