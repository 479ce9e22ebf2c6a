"""The coding-round screen: the editor holds train.py, typing is saved and restored, ctrl+g
grades the file and shows the verdicts (a file that does not compile: nothing runs)."""

from __future__ import annotations

from datetime import timedelta

from drill.mock.coding import starter_source
from drill.mock.coding.session import CodingSession
from drill.tui.screens.coding_round import CodingApp
from drill.tui.screens.rating_checklist import RatingChecklistScreen
from tests.support.pilot import run_async, text_of, until
from tests.support.services import app_slot


@run_async
async def test_typing_is_saved_and_a_resumed_round_shows_it(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        editor = app.screen.query_one("#editor")
        assert editor.text == starter_source()
        assert editor.language == "python"
        assert app.focused is editor  # a new round types into train.py at once
        editor.load_text("print('hello')\n")
        app.screen.query_one("#notes").load_text("ask about GPUs")
        await pilot.press("ctrl+s")
    assert session.script.read_text() == "print('hello')\n"
    resumed = CodingSession.latest(tmp_path / "rounds")
    assert resumed is not None and resumed.round_id == session.round_id
    assert resumed.notes() == "ask about GPUs"
    app = CodingApp(resumed, app_slot())
    async with app.run_test(size=(140, 40)):
        assert app.screen.query_one("#editor").text == "print('hello')\n"


@run_async
async def test_grading_a_file_that_does_not_compile_shows_file_and_line(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("f3")  # to the skeleton phase
        app.screen.query_one("#editor").load_text("import torch\ndef main(:\n")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "FAIL" in text_of(pilot, "#verdict-text"))
        text = text_of(pilot, "#verdict-text")
    assert "FAIL skeleton.exits: not run: train.py:2: SyntaxError" in text
    assert (session.folder / "grades" / "1" / "result.json").exists()


@run_async
async def test_f4_shows_the_model_answer_beside_the_code_once_the_round_is_over(tmp_path):
    from drill.mock.coding import model_answer_source
    from drill.tui.screens.model_answer import ModelAnswerScreen

    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        app.screen.query_one("#editor").load_text("print('mine')\n")
        await pilot.press("f4")
        assert not isinstance(app.screen, ModelAnswerScreen)  # not during the round
        await pilot.press("f10", "y", "f4")  # ending early asks first
        await pilot.pause()
        assert isinstance(app.screen, ModelAnswerScreen)
        assert app.screen.query_one("#yours").text == "print('mine')\n"
        assert app.screen.query_one("#model").text == model_answer_source()
        await pilot.press("escape")
        assert not isinstance(app.screen, ModelAnswerScreen)
    assert CodingSession.latest(tmp_path / "rounds").finished


@run_async
async def test_grading_after_the_round_feeds_failed_checks_back_to_review(drill_home, monkeypatch):
    import json

    from drill.mock.coding.session import default_rounds_dir
    from drill.tui.screens import coding_round
    from trainer_lab.result import new_result, write_result

    def fake_grade(script, out_dir, phases, cancel):  # the grader's result, built by hand
        result = new_result("mock-coding", {}, 2, out_dir)
        result["checks"] = [
            {"name": "skeleton.exits", "passed": True, "detail": "exit 0"},
            {"name": "distributed.new_order", "passed": False, "detail": "same order each epoch"},
        ]
        write_result(out_dir, result)
        return result

    monkeypatch.setattr(coding_round, "grade", fake_grade)
    session = CodingSession.create(default_rounds_dir())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        slot = app.screen.slot
        await slot.wait()  # the card was reviewed long ago, so it is due: a mock may rate it
        from drill.review.scheduler import rate_card
        from drill.times import utc_now

        rate_card(slot.ready.db, "map-sampler-state-correctness", "interview-map", 3,
                  content_hash=None, now=utc_now() - timedelta(days=60))  # fmt: skip
        await pilot.press("f10", "y")  # the end of the round grades everything by itself
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        assert review_rows(drill_home) == [("map-sampler-state-correctness", 3)]  # issue 37:
        assert not (session.folder / "feedback.json").exists()  # nothing rated before enter
        await pilot.press("enter")
        await until(pilot, lambda: (session.folder / "feedback.json").exists())
        await pilot.pause()
        text = text_of(pilot, "#verdict-text")
    assert "FAIL distributed.new_order: same order each epoch" in text
    assert "confirm the checklist; nothing is rated before you do" in text
    due = json.loads((session.folder / "feedback.json").read_text())["changes"][0]
    assert due.startswith("map-sampler-state-correctness: Again, due in 1 min (was due ")
    assert due.endswith(" UTC) (a failed check)")  # issue 34 and 37: the due dates, per card
    marker = json.loads((session.folder / "feedback.json").read_text())
    assert marker == {"rated": ["map-sampler-state-correctness"], "not_seen": [],
                      "changes": [due], "status": "confirmed"}  # fmt: skip
    rows = review_rows(drill_home)
    assert rows == [("map-sampler-state-correctness", 3), ("map-sampler-state-correctness", 1)]


def review_rows(drill_home) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    import sqlite3

    with sqlite3.connect(drill_home / "drill.sqlite3") as db:
        return db.execute("SELECT card_id, rating FROM review_log ORDER BY id").fetchall()


@run_async
async def test_checks_run_by_themselves_when_a_phase_times_out_and_all_at_the_end(
    drill_home, monkeypatch
):
    from drill.mock.coding.session import default_rounds_dir
    from drill.tui.screens import coding_round
    from tests.support.clocks import FakeClock
    from trainer_lab.result import new_result

    graded: list[tuple[str, ...]] = []

    def fake_grade(script, out_dir, phases, cancel):
        graded.append(tuple(phases))
        return new_result("mock-coding", {}, 2, out_dir)

    monkeypatch.setattr(coding_round, "grade", fake_grade)
    clock = FakeClock()
    session = CodingSession.create(default_rounds_dir(), now=clock)
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        clock.advance(15 * 60 + 1)  # clarify (5 min) and skeleton (10 min) are over
        app.screen.tick_now()
        await until(pilot, lambda: graded == [("skeleton",)] and not app.screen.grading)
        await pilot.press("f10", "y")  # the end: every phase's checks
        await until(pilot, lambda: len(graded) == 2 and not app.screen.grading)
    assert graded[1] == ("skeleton", "distributed", "restart", "torn", "monitoring")


@run_async
async def test_typing_goes_on_while_the_checks_run(tmp_path, monkeypatch):
    import threading

    from drill.tui.screens import coding_round
    from trainer_lab.result import new_result

    release = threading.Event()

    def slow_grade(script, out_dir, phases, cancel):  # blocks until the test lets it finish
        release.wait(30)
        return new_result("mock-coding", {}, 2, out_dir)

    monkeypatch.setattr(coding_round, "grade", slow_grade)
    app = CodingApp(CodingSession.create(tmp_path / "rounds"), app_slot())
    async with app.run_test(size=(140, 40)) as pilot:
        editor = app.screen.query_one("#editor")
        editor.load_text("")
        editor.focus()
        await pilot.press("ctrl+r")
        assert app.screen.grading
        await pilot.press("x", "=", "1")
        assert editor.text == "x=1" and app.screen.grading  # typed while the grading runs
        release.set()
        await until(pilot, lambda: not app.screen.grading)


@run_async
async def test_ctrl_e_edits_the_file_in_the_external_editor_then_reloads_it(tmp_path, monkeypatch):
    import contextlib
    import sys

    fake_editor = tmp_path / "ed.py"
    fake_editor.write_text("import sys\nopen(sys.argv[1], 'a').write('# from $EDITOR\\n')\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {fake_editor}")
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    suspended: list[bool] = []

    @contextlib.contextmanager
    def suspend():  # a headless test has no terminal to hand over: record the hand-over
        suspended.append(True)
        yield

    async with app.run_test(size=(140, 40)) as pilot:
        monkeypatch.setattr(app, "suspend", suspend)
        app.screen.query_one("#editor").load_text("print('mine')\n")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert suspended == [True]
        assert app.screen.query_one("#editor").text == "print('mine')\n# from $EDITOR\n"
    assert session.script.read_text() == "print('mine')\n# from $EDITOR\n"


@run_async
async def test_ctrl_e_without_a_terminal_says_where_the_file_is(tmp_path):
    from tests.support.pilot import Notices

    session = CodingSession.create(tmp_path / "rounds")
    notices = Notices()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(140, 40), message_hook=notices) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
    assert any(
        f"ctrl+e needs a terminal; the file is {session.script}" in m for m, _ in notices.shown
    )


def test_the_contract_pane_reflows_paragraphs_and_keeps_indented_blocks():
    from drill.mock.coding import CONTRACT
    from drill.tui.screens.coding_round import reflow

    text = reflow(CONTRACT)
    assert "`ToyDataset()` is map-style with 48 samples; item i is (i, x, y)" in text
    assert "resume by itself from the newest complete checkpoint in DIR;" in text
    assert '\n       {"step": 5, "loss": 0.41,' in text  # the JSON example stays a block
    assert "\n  torn         killed in the middle of writing the k-th file of the save" in text


@run_async
async def test_the_app_shows_the_intro_the_terminal_printed_before_it(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot(), intro="The standard round: the coding round.")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert "The standard round: the coding round." in notes
