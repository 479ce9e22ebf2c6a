"""The exercise screens: the editor holds the user's file, F1 reveals hints one at a time, ctrl+r
checks in a worker while typing goes on, the verdict names file and line; the list opens one."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets._footer import FooterKey

from drill.exercises.service import ExerciseService
from drill.tui.screens.exercise import ExerciseScreen
from drill.tui.screens.exercises import ExercisesScreen
from storage.db import open_database
from tests.support.db_damage import corrupt_middle
from tests.support.pilot import Notices, run_async, text_of, until
from tests.support.services import slot_for
from trainer_lab.exercises.catalogue import get_exercise


class ExerciseApp(App[None]):
    def __init__(self, screen_factory) -> None:
        super().__init__()
        self.factory = screen_factory

    def on_mount(self) -> None:
        self.push_screen(self.factory())


def _service(tmp_path: Path) -> ExerciseService:
    return ExerciseService(open_database(tmp_path / "db.sqlite3"), tmp_path / "exercises")


@run_async
async def test_the_editor_holds_the_starter_and_hints_come_one_at_a_time(tmp_path):
    service = _service(tmp_path)
    spec = get_exercise("first-nan")
    app = ExerciseApp(lambda: ExerciseScreen(service, "first-nan"))
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one("#ex-editor")
        assert editor.text == spec.starter_path.read_text() and app.focused is editor
        await pilot.press("f1")
        assert spec.hints[0] in text_of(pilot, "#ex-task-text")
        assert spec.hints[1] not in text_of(pilot, "#ex-task-text")
        await pilot.press("f1")
        assert spec.hints[1] in text_of(pilot, "#ex-task-text")
        await pilot.press("f4")  # the solution waits for a check
        assert not any(type(s).__name__ == "ModelAnswerScreen" for s in app.screen_stack)
    assert service.progress("first-nan").hints_shown == 2


@run_async
async def test_building_the_screen_starts_nothing_opening_it_does(tmp_path):
    service = _service(tmp_path)
    spec = get_exercise("first-nan")
    screen = ExerciseScreen(service, "first-nan")
    assert not screen.path.exists() and service.progress("first-nan").status == "not started"
    app = ExerciseApp(lambda: screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen.path.exists())
        assert screen.path.read_text() == spec.starter_path.read_text()
        assert "Status: started." in text_of(pilot, "#ex-verdict-text")
    assert service.progress("first-nan").status == "started"


@run_async
async def test_a_broken_database_gives_a_notice_and_the_file_still_opens(tmp_path):
    service = _service(tmp_path)
    corrupt_middle(tmp_path / "db.sqlite3")
    spec = get_exercise("first-nan")
    notices = Notices()
    app = ExerciseApp(lambda: ExerciseScreen(service, "first-nan"))
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: bool(notices.messages("error")))
        editor = app.screen.query_one("#ex-editor")
        await until(pilot, lambda: editor.text == spec.starter_path.read_text())
        errors = notices.messages("error")
        assert len(errors) == 1 and errors[0].startswith("Not saved: ") and "\n" not in errors[0]
        assert isinstance(app.screen, ExerciseScreen) and app.is_running
        await pilot.press("f1")  # a hint is recorded in the database: a notice, no crash
        await until(pilot, lambda: len(notices.messages("error")) == 2)
        assert notices.messages("error")[1].startswith("Not saved: ")
        assert isinstance(app.screen, ExerciseScreen) and app.is_running
    assert service.user_file("first-nan").read_text() == spec.starter_path.read_text()


@run_async
async def test_a_check_runs_in_a_worker_while_typing_goes_on(tmp_path):
    service = _service(tmp_path)
    app = ExerciseApp(lambda: ExerciseScreen(service, "first-nan"))
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one("#ex-editor")
        editor.load_text("def first_bad_module(model, x:\n")
        await pilot.press("ctrl+r")
        editor.insert("# typed while checking\n")  # the UI is not blocked
        await until(pilot, lambda: "FAIL" in text_of(pilot, "#ex-verdict-text"))
        text = text_of(pilot, "#ex-verdict-text")
    assert "FAIL names_the_first: not run: nan_hunt.py:1: SyntaxError" in text
    assert service.progress("first-nan").attempts == 1


@pytest.mark.lab
@run_async
async def test_solving_in_the_screen_shows_solved(tmp_path):
    service = _service(tmp_path)
    spec = get_exercise("first-nan")
    app = ExerciseApp(lambda: ExerciseScreen(service, "first-nan"))
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.query_one("#ex-editor").load_text(spec.solution_path.read_text())
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "Solved" in text_of(pilot, "#ex-verdict-text"), tries=3000)
    assert service.progress("first-nan").status == "solved"


@run_async
async def test_the_list_shows_status_and_enter_opens_an_exercise(tmp_path):
    service = _service(tmp_path)
    service.start("ddp-by-hand")
    app = ExerciseApp(
        lambda: ExercisesScreen(slot_for(None, service.db, exercises_home=service.home))
    )
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one("#exercises")
        row = service.list()
        assert table.row_count == len(row)
        index = [r.name for r in row].index("ddp-by-hand")
        assert str(table.get_row_at(index)[2]) == "started"
        keys = {k.description: k.key_display for k in app.screen.query(FooterKey)}
        assert keys.get("Open") == "⏎"  # the table's own enter hid the screen's
        table.move_cursor(row=index)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen) and app.screen.info.name == "ddp-by-hand"
