"""The exercise screen never writes over a newer file (issue 32, item 2): opened, nothing typed,
the file saved from another editor, then escape, ctrl+r, F4 or ctrl+e wrote the app's stale
text over that save. Each save path now reloads (nothing typed) or stops and lets the user
choose (unsaved edits). The timer that watches the file is slowed down here, so each test
exercises the key's own save. A file that is not UTF-8 opens with a notice and keeps its bytes
until edited (item 7)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from textual.widgets import TextArea

from drill.exercises.service import ExerciseService
from drill.tui.screens import exercise as exercise_screen
from drill.tui.screens.exercise import ExerciseScreen
from storage.db import open_database
from tests.support.pilot import HostApp, Notices, run_async, until

OUTSIDE = "def first_bad_module(model, x:\n    # saved from another editor\n"
RELOADED = "nan_hunt.py changed on disk: reloaded."


@pytest.fixture(autouse=True)
def slow_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exercise_screen, "WATCH_S", 3600.0, raising=False)


def _screen(tmp_path: Path) -> ExerciseScreen:
    service = ExerciseService(open_database(tmp_path / "db.sqlite3"), tmp_path / "exercises")
    return ExerciseScreen(service, "first-nan")


def _editor(app: HostApp) -> TextArea:
    return app.screen.query_one("#ex-editor", TextArea)


@pytest.mark.parametrize("key", ["escape", "ctrl+r", "f4", "ctrl+e"])
@run_async
async def test_a_save_made_elsewhere_survives_each_save_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("VISUAL", "true")  # ctrl+e: an editor that quits at once
    screen = _screen(tmp_path)
    notices = Notices()
    app = HostApp(screen)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless cannot suspend
        await until(pilot, lambda: screen.code is not None)
        screen.path.write_text(OUTSIDE)  # another editor saves; nothing was typed here
        await pilot.press(key)
        await until(pilot, lambda: RELOADED in notices.messages() or key == "ctrl+e")
        assert screen.path.read_text() == OUTSIDE
        if key != "escape":
            assert _editor(app).text == OUTSIDE and isinstance(app.screen, ExerciseScreen)
        if key == "ctrl+r":  # the check ran on the file as saved elsewhere
            await until(pilot, lambda: not screen.checking, tries=3000)
    assert screen.path.read_text() == OUTSIDE  # leaving the app wrote nothing over it


@run_async
async def test_unsaved_edits_over_a_newer_file_wait_for_the_users_choice(tmp_path: Path) -> None:
    screen = _screen(tmp_path)
    notices = Notices()
    app = HostApp(screen)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: screen.code is not None)
        _editor(app).insert("# typed here\n")
        mine = _editor(app).text
        screen.path.write_text(OUTSIDE)
        for key in ("ctrl+r", "escape"):
            await pilot.press(key)
            assert isinstance(app.screen, ExerciseScreen) and not screen.checking
            assert screen.path.read_text() == OUTSIDE and _editor(app).text == mine
        assert any("ctrl+l loads the file" in m for m in notices.messages("warning"))
        await pilot.press("ctrl+s")  # the user keeps the editor's text
        assert screen.path.read_text() == mine
        screen.path.write_text(OUTSIDE)
        _editor(app).insert("# more\n")
        await pilot.press("ctrl+r")  # told: nothing checked, nothing written
        await pilot.press("ctrl+l")  # the user takes the file's
        assert _editor(app).text == OUTSIDE == screen.path.read_text()


@run_async
async def test_a_second_escape_leaves_without_writing_over_the_newer_file(tmp_path: Path) -> None:
    screen = _screen(tmp_path)
    app = HostApp(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen.code is not None)
        _editor(app).insert("# typed here\n")
        screen.path.write_text(OUTSIDE)
        await pilot.press("escape")
        assert isinstance(app.screen, ExerciseScreen)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExerciseScreen))
    assert screen.path.read_text() == OUTSIDE


@run_async
async def test_the_watch_reloads_a_save_made_elsewhere(tmp_path: Path) -> None:
    screen = _screen(tmp_path)
    notices = Notices()
    app = HostApp(screen)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: screen.code is not None)
        screen.path.write_text(OUTSIDE)
        screen._watch()  # what the timer calls
        assert _editor(app).text == OUTSIDE
        await until(pilot, lambda: RELOADED in notices.messages())


LATIN_1 = "# café, naïve\nx = 1\n".encode("latin-1")


@run_async
async def test_a_latin_1_file_opens_with_a_notice_and_keeps_its_bytes_until_edited(
    tmp_path: Path,
) -> None:
    screen = _screen(tmp_path)
    screen.path.parent.mkdir(parents=True)
    screen.path.write_bytes(LATIN_1)
    notices = Notices()
    app = HostApp(screen)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: screen.code is not None)
        assert _editor(app).text == "# café, naïve\nx = 1\n"
        (warning,) = notices.messages("warning")
        assert warning.startswith("nan_hunt.py is not UTF-8 (byte 0xe9 at offset 5)")
        await pilot.press("ctrl+s", "f4")
        assert screen.path.read_bytes() == LATIN_1  # nothing edited: nothing rewritten
        _editor(app).insert("# edited\n")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExerciseScreen))
    assert screen.path.read_text(encoding="utf-8") == "# edited\n# café, naïve\nx = 1\n"
