"""The labs screen: catalogue table, linked cards, past runs reopened, a run without a card."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, OptionList

from drill.decks.loader import load_decks
from drill.labs.runs import LabRuns
from drill.tui.screens.lab_panel import LabPanelScreen
from drill.tui.screens.lab_results import LabResultsScreen
from drill.tui.screens.labs import LabsScreen
from tests.support.lab_fakes import OK_RESULT, FakeRunner
from tests.support.lab_screens import one_card_decks as _deck
from tests.support.lab_screens import record_lab_run
from tests.support.pilot import HostApp, run_async, until
from tests.support.services import slot_for
from trainer_lab.catalogue import CATALOGUE


def _one_past_run(db: Any, card: Any, tmp_path: Path) -> LabRuns:
    """A finished ddp-baseline run of `card` on 2026-03-09 08:30, in the history."""
    old_dir = tmp_path / "old-run"
    old_dir.mkdir()
    (old_dir / "result.json").write_text(json.dumps(OK_RESULT))
    record_lab_run(db, card, old_dir, datetime(2026, 3, 9, 8, 30, tzinfo=UTC))
    return LabRuns(db)


@run_async
async def test_labs_screen_lists_reopens_and_runs(db: Any, card: Any, tmp_path: Path) -> None:
    decks = load_decks([_deck(tmp_path)], include_bundled=False)
    assert not decks.problems, decks.problems
    history = _one_past_run(db, card, tmp_path)
    runner = FakeRunner()
    runner.release.set()
    screen = LabsScreen(slot_for(decks, db), runner=runner, runs_root=tmp_path / "runs")
    app = HostApp(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = screen.query_one("#labs", DataTable)
        assert table.row_count == len(CATALOGUE)
        row = table.get_row("ddp-baseline")
        assert str(row[2]) == "1" and str(row[3]) == "2026-03-09 08:30 · ok · checks 2/2 · 6.2 s"
        assert str(table.get_row("sampler")[3]) == "never run"
        table.move_cursor(row=list(CATALOGUE).index("ddp-baseline"))
        await pilot.pause()
        runs = screen.query_one("#lab-runs", OptionList)
        assert runs.option_count == 1 and "card ddp-equals-single" in str(
            runs.get_option_at_index(0).prompt
        )
        runs.focus()
        runs.highlighted = 0
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LabResultsScreen))
        assert app.screen.result["status"] == "ok"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        table.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        panel = app.screen
        assert isinstance(panel, LabPanelScreen) and panel.card is None
        assert not panel.query("#predict-choice")  # no card, no prediction
        await pilot.press("ctrl+r")
        await until(pilot, lambda: panel.controller is not None and panel.controller.finished)
        await until(pilot, lambda: panel.query_one("#outcome").display)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert history.runs(lab="ddp-baseline")[0].card_id is None
        last = table.get_row("ddp-baseline")[3]
        assert "2026-03-09" not in last and " · ok · checks 2/2" in last


@run_async
async def test_tab_reaches_past_runs_and_enter_opens_the_first_run(db: Any, tmp_path: Path) -> None:
    run_dir = tmp_path / "old-run"
    run_dir.mkdir()
    (run_dir / "result.json").write_text(json.dumps(OK_RESULT))
    record_lab_run(db, None, run_dir, datetime(2026, 3, 9, 8, 30, tzinfo=UTC))
    screen = LabsScreen(slot_for(None, db), runs_root=tmp_path / "runs")
    app = HostApp(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = screen.query_one("#labs", DataTable)
        table.move_cursor(row=list(CATALOGUE).index("ddp-baseline"))
        await pilot.pause()
        runs = screen.query_one("#lab-runs", OptionList)
        assert runs.option_count == 1
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is runs)
        await pilot.press("enter")  # no Down first
        await until(pilot, lambda: isinstance(app.screen, LabResultsScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is table)


@run_async
async def test_at_80_columns_the_last_result_is_whole_and_enter_is_named(
    db: Any, card: Any, tmp_path: Path
) -> None:
    from textual.widgets import Static
    from textual.widgets._footer import FooterKey

    decks = load_decks([_deck(tmp_path)], include_bundled=False)
    _one_past_run(db, card, tmp_path)
    screen = LabsScreen(slot_for(decks, db), runs_root=tmp_path / "runs")
    app = HostApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = screen.query_one("#labs", DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["lab", "cards", "last result"]
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= 78
        table.move_cursor(row=list(CATALOGUE).index("ddp-baseline"))
        await pilot.pause()
        assert str(table.get_row("ddp-baseline")[2]) == "2026-03-09 08:30 · ok · checks 2/2 · 6.2 s"
        summary = str(screen.query_one("#lab-summary", Static).render())
        assert summary.startswith(CATALOGUE["ddp-baseline"].summary[:40])
        keys = {k.description: k.key_display for k in screen.query(FooterKey)}
        assert keys.get("Run lab") == "⏎"
        screen.query_one("#lab-runs", OptionList).focus()
        await pilot.pause()
        keys = {k.description: k.key_display for k in screen.query(FooterKey)}
        assert keys.get("Open run") == "⏎"
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert len(table.columns) == 4  # the group too; the summary stays under the table
        assert str(screen.query_one("#lab-summary").render()).startswith(
            CATALOGUE["ddp-baseline"].summary[:40]
        )
