"""The lab panel is told by the run when there is something new (a RunChanged message posted
from the run's thread), instead of polling it: with the elapsed-time clock stopped, the log, the
progress and the outcome still arrive, every line once and in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import RichLog, Static

from drill.decks.models import Card
from drill.tui.screens import lab_panel
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import FakeRunner
from tests.support.lab_screens import make_panel
from tests.support.pilot import HostApp, choose, run_async, text_of, until


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The elapsed-time clock ticks once an hour: anything the panel shows came by message."""
    monkeypatch.setattr(lab_panel, "ELAPSED_TICK_S", 3600.0)


@run_async
async def test_the_log_and_the_outcome_arrive_as_messages(
    card: Card, db: Any, tmp_path: Path, no_clock: None
) -> None:
    runner = FakeRunner(steps=30)
    panel = make_panel(card, db, runner, tmp_path)
    changed: list[Message] = []

    def hook(message: Message) -> None:
        if isinstance(message, LabPanelScreen.RunChanged):
            changed.append(message)

    app = HostApp(panel)
    async with app.run_test(size=(100, 50), message_hook=hook) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        log = panel.query_one("#lab-log", RichLog)
        await until(pilot, lambda: any("step 30" in line.text for line in log.lines))
        assert text_of(pilot, "#run-status").startswith("running · 1/1 · step 30")
        runner.release.set()
        await until(pilot, lambda: panel.query_one("#outcome").display)
        assert "Suggested rating: Easy (4)" in text_of(pilot, "#outcome")
        assert text_of(pilot, "#run-status").startswith("ok")
    lines = [line.text for line in log.lines]
    steps = [text for text in lines if ": step " in text]
    assert [text.rsplit("step ", 1)[1] for text in steps] == [str(s) for s in range(1, 31)]
    assert any("finished: ok" in text for text in lines)
    assert changed  # the panel was told, not polled


@run_async
async def test_the_outcome_stays_in_view_when_the_body_grows_after_it(
    card: Card, db: Any, tmp_path: Path
) -> None:
    """Scrolled to the outcome once it is shown; text laid out later (a slow machine lays out
    wrapped text after that scroll) keeps the view at the end, unless the user has
    scrolled away, which is left alone."""
    runner = FakeRunner(steps=5)
    panel = make_panel(card, db, runner, tmp_path)
    async with HostApp(panel).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        runner.release.set()
        await until(pilot, lambda: panel.query_one("#outcome").display)
        body = panel.query_one("#lab-body")
        await until(pilot, lambda: body.max_scroll_y > 0 and body.scroll_y == body.max_scroll_y)
        outcome = panel.query_one("#outcome", Static)
        end_before = body.max_scroll_y
        outcome.update("late line\n" * 30)
        await until(pilot, lambda: body.max_scroll_y > end_before)
        await until(pilot, lambda: body.scroll_y == body.max_scroll_y)
        body.scroll_home(animate=False)
        await until(pilot, lambda: body.scroll_y == 0)
        end_before = body.max_scroll_y
        outcome.update("later line\n" * 60)
        await until(pilot, lambda: body.max_scroll_y > end_before)
        await pilot.pause()
        assert body.scroll_y == 0
