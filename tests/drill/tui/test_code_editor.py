"""The code editor of the exercise and coding-round screens: enter keeps the indentation (one
level deeper after a block opener), f7 select-all is in the footer, the exercise editor wraps,
ctrl+o walks the file:line places a verdict names, f5 gives the verdict pane the screen."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from drill.exercises.service import ExerciseService
from drill.tui.code_editor import CodeEditor, VerdictPlaces, file_lines, next_line_indent
from drill.tui.plain import joined
from drill.tui.screens.exercise import ExerciseScreen
from storage.db import open_database
from tests.support.pilot import run_async, text_of
from trainer_lab.exercises.catalogue import get_exercise


class EditorApp(App[None]):
    def compose(self) -> ComposeResult:
        yield CodeEditor.code_editor("", language="python", id="code")
        yield Footer()


class ExerciseApp(App[None]):
    def __init__(self, screen: ExerciseScreen) -> None:
        super().__init__()
        self.exercise = screen

    def on_mount(self) -> None:
        self.push_screen(self.exercise)


def test_next_line_indent() -> None:
    assert next_line_indent("    x = 1") == "    "
    assert next_line_indent("def f(x):") == "    "
    assert next_line_indent("    for i in range(3):  # loop") == "        "
    assert next_line_indent("\tif x:") == "\t    "
    assert next_line_indent("x = {'a': 1}") == ""


def test_file_lines_are_the_named_file_only_in_order_once() -> None:
    text = "FAIL a: at train.py:105\nlikely cause: my_train.py:7, train.py:12, train.py:105"
    assert file_lines(text, "train.py") == [105, 12]
    places = VerdictPlaces()
    places.show(text, "train.py")
    assert [places.take(), places.take(), places.take()] == [105, 12, 105]
    places.show("all checks pass", "train.py")
    assert places.take() is None


@run_async
async def test_enter_keeps_the_indentation_and_f7_is_in_the_footer() -> None:
    app = EditorApp()
    async with app.run_test(size=(80, 24)) as pilot:
        editor = app.query_one(CodeEditor)
        editor.focus()
        for key in ["d", "e", "f", "space", "f", "colon", "enter", "x", "enter", "y"]:
            await pilot.press(key)
        assert editor.text == "def f:\n    x\n    y"
        keys = {k.key: k.description for k in app.screen.query(FooterKey)}
        assert keys.get("f7") == "Select all"
        await pilot.press("f7")
        assert editor.selected_text == editor.text


@run_async
async def test_the_exercise_editor_wraps_walks_verdict_places_and_zooms(tmp_path: Path) -> None:
    service = ExerciseService(open_database(tmp_path / "db.sqlite3"), tmp_path / "exercises")
    name = Path(get_exercise("first-nan").file).name
    screen = ExerciseScreen(service, "first-nan")
    app = ExerciseApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        editor = screen.query_one("#ex-editor", CodeEditor)
        assert editor.soft_wrap
        await pilot.pause()
        keys = list(screen.query(FooterKey))
        palette = [k.region.x for k in keys if k.has_class("-command-palette")]
        room = min([80, *palette])  # the palette key sits over the right end
        shown = {k.key for k in keys if k.region.right <= room}
        assert {"f7", "escape"} <= shown  # both fit at 80 columns
        verdict = screen.query_one("#ex-verdict", VerticalScroll)
        screen._show(joined(("FAIL", "red"), f" finite: NaN at {name}:3; see {name}:1"))
        await pilot.pause()
        assert f"ctrl+o: the editor at {name}:3" in text_of(pilot, "#ex-verdict-text")
        await pilot.press("ctrl+o")
        assert editor.cursor_location == (2, 0) and app.focused is editor
        await pilot.press("ctrl+o")
        assert editor.cursor_location == (0, 0)
        await pilot.press("f5")
        assert screen.maximized is verdict
        await pilot.press("f5")
        assert screen.maximized is None
