"""The pushback phase's follow-up questions in a coding round (drill.mock.coding.pushback): chosen
from the round's full grading and the code it graded (a correct and a broken script are asked
different things), from the code alone when no grading will come, once per round (a resume
asks the same), and answered under their own headings in the notes. Fast: gradings are the
fixtures saved from real ones (tests/drill/mock/coding/fixtures); the lab test at the end grades
a round's script for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drill.mock.coding.pushback import (
    answers,
    full_grading,
    has_block,
    notes_with_questions,
    pushback_questions,
    question_block,
)
from drill.mock.coding.session import CodingSession
from tests.support.coding_grader import broken_replay_facts
from trainer_lab.grading import model_answer_source
from trainer_lab.grading.variants import load_variants

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BROKEN = "sampler-position-not-saved"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"followups-{name}.json").read_text())


def broken_source() -> str:
    return next(v for v in load_variants() if v.id == BROKEN).source()


def graded(session: CodingSession, number: int, result: dict[str, Any], source: str) -> None:
    """A grading of the round as the grader leaves it: result.json and its workspace copy."""
    out = session.folder / "grades" / str(number)
    (out / "workspace").mkdir(parents=True)
    (out / "result.json").write_text(json.dumps(result))
    (out / "workspace" / "train.py").write_text(source)


def partial(result: dict[str, Any], family: str) -> dict[str, Any]:
    """The same grading cut down to one grader phase (what ctrl+r runs in an early phase)."""
    cut = json.loads(json.dumps(result))
    cut["checks"] = [c for c in cut["checks"] if c["name"].startswith(f"{family}.")]
    return cut


def test_a_correct_and_a_broken_script_are_asked_different_questions(tmp_path):
    good = CodingSession.create(tmp_path / "rounds")
    graded(good, 1, fixture("model-answer"), model_answer_source())
    bad = CodingSession.create(tmp_path / "rounds")
    graded(bad, 1, fixture(BROKEN), broken_source())

    asked_good = pushback_questions(good)
    asked_bad = pushback_questions(bad)

    assert 3 <= len(asked_good) <= 5 and 3 <= len(asked_bad) <= 5
    assert all(q["kind"] == "what-if" for q in asked_good)  # every check held
    first = asked_bad[0]
    assert (first["kind"], first["source_check"]) == ("failed", "restart.no_replay_or_skip")
    assert broken_replay_facts()[0] in first["question"]  # the facts of its own run, quoted
    assert "map-sampler-state-correctness" in first["cards"]
    assert [q["id"] for q in asked_good] != [q["id"] for q in asked_bad]
    assert good.pushback_from == 1 and bad.pushback_from == 1


def test_the_latest_full_grading_is_used_and_partial_ones_are_not(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    graded(session, 1, fixture(BROKEN), broken_source())
    graded(session, 2, fixture("model-answer"), model_answer_source())
    graded(session, 3, partial(fixture(BROKEN), "skeleton"), "print('newer')\n")
    assert full_grading(tmp_path / "nowhere") is None
    number, result = full_grading(session.folder)
    assert number == 2 and result["checks"] == fixture("model-answer")["checks"]
    assert pushback_questions(session)[0]["kind"] == "what-if"  # from grading 2's evidence


def test_a_folder_named_by_a_non_ascii_digit_is_no_grading(tmp_path):
    """grades/ is the user's folder: "²" is a digit to str.isdigit() but not to int()."""
    session = CodingSession.create(tmp_path / "rounds")
    graded(session, 1, fixture("model-answer"), model_answer_source())
    (session.folder / "grades" / "\u00b2").mkdir()
    number, _ = full_grading(session.folder)
    assert number == 1
    assert pushback_questions(session)[0]["kind"] == "what-if"


def test_no_full_grading_asks_nothing_yet_or_from_the_code(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    graded(session, 1, partial(fixture(BROKEN), "restart"), broken_source())
    assert pushback_questions(session) == []  # the screen grades everything first
    assert session.pushback == []
    asked = pushback_questions(session, from_code=True)
    assert len(asked) == 3 and {q["kind"] for q in asked} == {"from-code"}
    assert session.pushback_from is None
    assert "Your checkpoint" in asked[0]["question"]  # about the starter's code, not a pool


def test_the_questions_are_chosen_once_and_a_resume_asks_the_same(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    graded(session, 1, fixture(BROKEN), broken_source())
    asked = pushback_questions(session)
    graded(session, 2, fixture("model-answer"), model_answer_source())  # a later grading
    assert pushback_questions(session) == asked
    resumed = CodingSession(session.folder)
    assert resumed.pushback == asked and resumed.pushback_from == 1
    state = json.loads((session.folder / "state.json").read_text())
    assert [q["id"] for q in state["pushback"]] == [q["id"] for q in asked]


def test_an_older_rounds_hard_cards_are_not_taken_for_questions(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    state = json.loads((session.folder / "state.json").read_text())
    state["pushback"] = [{"card_id": "hard-x", "deck_id": "d", "text": "Why?", "rubric": ["a"]}]
    (session.folder / "state.json").write_text(json.dumps(state))
    assert CodingSession(session.folder).pushback == []


def test_each_answer_is_read_under_its_own_heading_without_the_quoted_question():
    questions = [
        {"question": "Why  rank 0?", "source_check": "restart.single_writer"},
        {"question": "What if W=3?", "source_check": "distributed.exactly_once"},
        {"question": "Which phase?", "source_check": "monitoring.named_phases"},
    ]
    block = question_block(questions)
    assert block.startswith("## Q1 (restart.single_writer)\n> Why rank 0?\n\n")
    assert has_block(block) and not has_block("## Notes\nQ1 is not a heading")
    notes = "my clarify notes\n\n" + block.replace(
        "> What if W=3?\n", "> What if W=3?\nthe sampler\n"
    )
    notes = notes.replace("> Why rank 0?\n", "> Why rank 0?\nreplicas are identical\n> quoted\n")
    notes += "## Other\nnot an answer\n"
    assert answers(notes, 3) == ["replicas are identical", "the sampler", ""]
    assert answers("no headings at all", 2) == ["", ""]


def test_the_questions_go_into_the_notes_after_one_empty_line_once():
    """The one rule the screen and `drill mock watch` both apply."""
    questions = [{"question": "Why rank 0?", "source_check": "restart.single_writer"}]
    block = question_block(questions)
    for notes, joined in [
        ("", block),
        ("clarify", "clarify\n\n" + block),
        ("clarify\n", "clarify\n\n" + block),
        ("clarify\n\n", "clarify\n\n" + block),
    ]:
        assert notes_with_questions(notes, questions) == joined
        assert notes_with_questions(joined, questions) == joined  # a resume adds none


@pytest.mark.lab
def test_a_real_grading_of_a_broken_round_asks_about_its_own_failure(tmp_path):
    """One real full grading (torchrun): the round's script with the broken sampler position
    is asked first about the replayed samples its own resume fetched."""
    from trainer_lab.grading import grade

    session = CodingSession.create(tmp_path / "rounds")
    session.save(code=broken_source())
    out = session.folder / "grades" / "1"
    result = grade(session.script, out)
    asked = pushback_questions(session)
    assert asked[0]["source_check"] == "restart.no_replay_or_skip", "\n".join(
        c["name"] + ": " + c["detail"] for c in result["checks"]
    )
    fetched = next(c for c in result["checks"] if c["name"] == "restart.no_replay_or_skip")
    ids = fetched["detail"].split("fetched ", 1)[1].split("]", 1)[0] + "]"
    assert ids in asked[0]["question"]
    good = CodingSession.create(tmp_path / "rounds")  # the model answer's saved grading
    graded(good, 1, fixture("model-answer"), model_answer_source())
    assert [q["id"] for q in pushback_questions(good)] != [q["id"] for q in asked]
