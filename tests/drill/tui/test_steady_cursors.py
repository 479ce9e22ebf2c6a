"""tests.support.pilot.steady_cursors, which every snapshot with a text area relies on: the
focused area's cursor is drawn whatever phase the blink timer was in."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input, TextArea

from tests.support.pilot import run_async, screen_text, steady_cursors


class OneArea(App[None]):
    def compose(self) -> ComposeResult:
        yield TextArea("abc", id="area")


def cursor_cells(app: App[None]) -> int:
    """Cells painted in the cursor's colour (the cursor is a block over one cell)."""
    area = app.query_one(TextArea)
    colour = area._theme.cursor_style.bgcolor.triplet.hex  # type: ignore[union-attr]
    return app.export_screenshot().count(f'fill="{colour}"')


@run_async
async def test_the_cursor_is_drawn_after_a_render_in_the_blink_off_phase() -> None:
    app = OneArea()
    async with app.run_test(size=(30, 6)) as pilot:
        area = app.query_one(TextArea)
        area.focus()
        await pilot.pause()
        area._cursor_visible = False  # the blink timer's off phase (stands still in tests)
        await pilot.pause()
        assert "abc" in screen_text(app) and cursor_cells(app) == 0
        steady_cursors(app)
        await pilot.pause()
        assert area.has_focus and cursor_cells(app) == 1


class OneInput(App[None]):
    def compose(self) -> ComposeResult:
        yield Input(placeholder="tags", id="field")


@run_async
async def test_an_inputs_cursor_is_drawn_whatever_phase_the_blink_was_in() -> None:
    """The study form's snapshot failed in CI once: its focused input was captured in the blink
    timer's off phase. Steadied, the cursor is drawn and stays drawn."""
    app = OneInput()
    async with app.run_test(size=(30, 5)) as pilot:
        field = app.query_one(Input)
        field.focus()
        await pilot.pause()
        drawn = app.export_screenshot()
        field._cursor_visible = False  # the off phase
        await pilot.pause()
        assert app.export_screenshot() != drawn
        steady_cursors(app)
        await pilot.pause()
        assert app.export_screenshot() == drawn
        assert not field.cursor_blink
