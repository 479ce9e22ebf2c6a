"""The coding screen's pushback phase: entering it grades the whole script, then the
interviewer's follow-ups come from that grading's evidence (a correct and a broken script are
asked different things), each with an answer heading in the notes; a resume asks the same;
without a grading, the questions come from the code; at the end exactly the answered
questions' cards are rated (and only cards the user has reviewed before). Gradings are the
fixtures saved from real ones, written where the grader writes them."""

from __future__ import annotations

import json
import sqlite3

from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.tui.screens import coding_round
from drill.tui.screens.coding_followups import FollowUpScreen
from drill.tui.screens.coding_round import CodingApp, CodingRoundScreen
from drill.tui.screens.rating_checklist import RatingChecklistScreen
from tests.support.coding_grader import BROKEN, broken_replay_facts, broken_source, fake_grader
from tests.support.pilot import run_async, text_of, until
from tests.support.services import app_slot
from trainer_lab.grading import model_answer_source


async def to_pushback(pilot) -> None:
    """Into the pushback: the follow-ups are asked one at a time (issue 37); each is submitted
    empty here, so the round's screen is back on top."""
    await pilot.press("f3", "f3", "f3", "f3")
    await skip_followups(pilot)
    await until(pilot, lambda: "Q1." in text_of(pilot, "#pushback"))


async def skip_followups(pilot) -> None:
    await until(pilot, lambda: isinstance(pilot.app.screen, FollowUpScreen))
    await pilot.press(*["ctrl+s"] * len(pilot.app.screen.asked.questions))
    await until(pilot, lambda: isinstance(pilot.app.screen, CodingRoundScreen))


def asked_in(pilot) -> str:
    return " ".join(text_of(pilot, "#pushback").split())


@run_async
async def test_pushback_grades_everything_then_asks_about_the_scripts_own_evidence(
    drill_home, monkeypatch
):
    graded: list[tuple[str, ...]] = []
    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), graded))
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        shown = asked_in(pilot)
        notes = app.screen.query_one("#notes").text
    assert graded == [("skeleton", "distributed", "restart", "torn", "monitoring")]
    assert "from your grading's evidence" in shown
    fetched, step, resumed = broken_replay_facts()
    assert f"fetched {fetched} for step {step}" in shown  # its own run's facts
    assert f"## Q1 (restart.no_replay_or_skip)\n> After your resume from step {resumed}" in notes
    assert notes.count("## Q") == len(session.pushback)
    assert session.notes() == notes  # saved at once

    # a resume asks the same and adds no second answer block
    resumed = CodingSession.latest(default_rounds_dir())
    app = CodingApp(resumed, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await skip_followups(pilot)  # none answered yet: asked again, from Q1
        await until(pilot, lambda: "Q1." in text_of(pilot, "#pushback"))
        assert asked_in(pilot) == shown
        assert app.screen.query_one("#notes").text == notes
    assert len(graded) == 1  # the questions were kept, nothing graded again


@run_async
async def test_the_questions_follow_the_notes_after_one_empty_line(drill_home, monkeypatch):
    """The same rule as `drill mock watch` (drill.mock.coding.pushback.notes_with_questions)."""
    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), []))
    session = CodingSession.create(default_rounds_dir())
    session.save(notes="clarify: 2 GPUs\n")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        notes = app.screen.query_one("#notes").text
    assert notes.startswith("clarify: 2 GPUs\n\n## Q1 (")


@run_async
async def test_a_correct_script_is_asked_other_questions_than_a_broken_one(drill_home, monkeypatch):
    asked: dict[str, str] = {}
    for name, source in (("model-answer", model_answer_source()), (BROKEN, broken_source())):
        monkeypatch.setattr(coding_round, "grade", fake_grader(name, source, []))
        app = CodingApp(CodingSession.create(default_rounds_dir()), app_slot())
        async with app.run_test(size=(140, 40)) as pilot:
            await to_pushback(pilot)
            asked[name] = asked_in(pilot)
    assert asked["model-answer"] != asked[BROKEN]
    assert f"fetched {broken_replay_facts()[0]}" not in asked["model-answer"]
    assert "Your save survived a kill in the middle of writing it" in asked["model-answer"]


@run_async
async def test_without_a_grading_the_questions_come_from_the_code(drill_home, monkeypatch):
    def failing(script, out_dir, phases, cancel):
        raise OSError("no space left on device")

    monkeypatch.setattr(coding_round, "grade", failing)
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        assert "from your code (no full grading ran)" in asked_in(pilot)
        assert "grading failed: OSError" in text_of(pilot, "#verdict-text")
    assert {q["kind"] for q in session.pushback} == {"from-code"}


@run_async
async def test_the_end_rates_the_answered_questions_cards_and_only_reviewed_ones(
    drill_home, monkeypatch
):
    from drill.review.scheduler import rate_card

    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), []))
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        answered, left = session.pushback[1], session.pushback[2]  # two what-if questions
        services = await app.screen.slot.wait()
        reviewed = [answered["cards"][0], left["cards"][0]]  # one card of each, seen before
        for card in reviewed:
            rate_card(services.db, card, services.decks.deck_of(card), 3, content_hash=None)
        notes = app.screen.query_one("#notes")
        text = notes.text.replace("\n\n## Q3", "\nI would look at it.\n\n## Q3", 1)
        notes.load_text(text)  # Q2 answered weakly, the others not at all
        await pilot.press("f10", "y")
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        await pilot.press("enter")  # the matcher's ticks, confirmed as they are
        await until(pilot, lambda: (session.folder / "feedback.json").exists())
    with sqlite3.connect(drill_home / "drill.sqlite3") as db:
        rows = db.execute("SELECT card_id, rating FROM review_log ORDER BY id").fetchall()
    assert rows[2:] == [(answered["cards"][0], 1)]  # answered, its rubric missed: Again
    # the question left unanswered rated nothing; the failed checks' and the answered
    # question's other cards were never reviewed: left new
    marker = json.loads((session.folder / "feedback.json").read_text())
    assert marker["rated"] == [answered["cards"][0]]
    assert set(answered["cards"][1:]) <= set(marker["not_seen"])
    assert "map-sampler-state-correctness" in marker["not_seen"]  # a failed check's card
    assert left["cards"][0] not in marker["not_seen"]


ALL = ("skeleton", "distributed", "restart", "torn", "monitoring")


@run_async
async def test_the_end_shows_the_pushback_grading_again_when_train_py_is_unchanged(
    drill_home, monkeypatch
):
    graded: list[tuple[str, ...]] = []
    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), graded))
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        await pilot.press("f10", "y")
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        await pilot.press("n")  # do not rate
        await until(pilot, lambda: "unchanged since grading 1" in text_of(pilot, "#verdict-text"))
        verdicts = text_of(pilot, "#verdict-text")
    assert graded == [ALL]  # the full grading ran once
    assert "restart.no_replay_or_skip" in verdicts
    assert len(list((session.folder / "grades").iterdir())) == 1


@run_async
async def test_the_end_grades_again_when_train_py_changed_after_the_pushback(
    drill_home, monkeypatch
):
    graded: list[tuple[str, ...]] = []
    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), graded))
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await to_pushback(pilot)
        editor = app.screen.query_one("#editor")
        editor.insert("# saved the sampler position too\n", (0, 0))
        await pilot.press("f10", "y")
        await until(pilot, lambda: len(graded) == 2)
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        await pilot.press("n")  # do not rate
        await until(pilot, lambda: "F8" in text_of(pilot, "#verdict-text"))
        assert "unchanged since" not in text_of(pilot, "#verdict-text")
    assert graded == [ALL, ALL]


@run_async
async def test_each_follow_up_is_answered_in_its_box_and_kept_in_the_notes(drill_home, monkeypatch):
    from drill.mock.coding.pushback import answers

    monkeypatch.setattr(coding_round, "grade", fake_grader(BROKEN, broken_source(), []))
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("f3", "f3", "f3", "f3")
        await until(pilot, lambda: isinstance(app.screen, FollowUpScreen))
        assert app.screen.asked.number == 1  # one question at a time, not the list
        count = len(app.screen.asked.questions)
        await pilot.press(*"sampler", "ctrl+s")
        await until(pilot, lambda: app.screen.asked.number == 2)
        # the answer names a design choice: Q2 builds on it, quoting it (followup_probes)
        shown = str(app.screen.query_one("#followup-question").render())
        assert shown.startswith('You said: "sampler". What does DistributedSampler do')
        box = str(app.screen_stack[-2].query_one("#pushback").render())  # the round's box too
        assert 'Q2. You said: "sampler".' in box
    kept = answers(session.notes(), len(session.pushback))
    assert kept[0] == "sampler" and kept[1:] == [""] * (len(kept) - 1)
    assert len(session.pushback) == count and session.pushback[1]["id"] == "probe-sampler"
    assert '## Q2 (builds on Q1)\n> You said: "sampler".' in session.notes()
    again = CodingSession(session.folder)  # saved with the round: a resume asks the same
    assert again.pushback[1]["question"] == session.pushback[1]["question"]
