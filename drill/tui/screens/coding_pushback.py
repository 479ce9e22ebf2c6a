"""The coding round's pushback phase on screen: what the box above the contract says, and the
follow-up questions added to the notes (drill.mock.coding.pushback chooses them)."""

from __future__ import annotations

from textual.widgets import TextArea

from drill.mock.coding.pushback import has_block, question_block

GRADING_FIRST: tuple = (
    ("Pushback: grading your whole script first", "b"),
    "The interviewer's follow-up questions come from what your code does in it; "
    "they appear here, with an answer heading for each in the notes.",
)


def asked_rows(questions: list[dict], *, from_grading: bool) -> list:
    """The box's rows: where the questions come from, each question on one line, and where to
    answer them."""
    where = (
        "from your grading's evidence" if from_grading else "from your code (no full grading ran)"
    )
    rows: list = [(f"Pushback: the interviewer asks, {where}", "b")]
    rows += [f"Q{i}. {' '.join(str(q.get('question', '')).split())}" for i, q in
             enumerate(questions, 1)]  # fmt: skip
    rows.append(("Answer each under its ## Q heading in the notes (f5 zooms them).", "dim"))
    return rows


def add_to_notes(notes: TextArea, questions: list[dict]) -> bool:
    """Append a ## Q heading per question to the notes, unless they have them already, and put
    the cursor on Q1's answer line; whether they were added."""
    if has_block(notes.text):
        return False
    lead = "" if not notes.text or notes.text.endswith("\n\n") else "\n\n"
    notes.insert(lead + question_block(questions), notes.document.end)
    first = notes.text.splitlines().index(question_block(questions[:1]).splitlines()[0])
    notes.cursor_location = (first + 2, 0)  # Q1's answer line
    notes.scroll_to(y=first, animate=False)
    return True
