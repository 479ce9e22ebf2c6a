"""One run of a real lab (ddp-baseline, 4 steps, world size 2) through the panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import RichLog

from drill.decks.models import Card
from drill.labs.runs import LabRuns
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.pilot import HostApp, choose, run_async, text_of, until


@pytest.mark.lab
@run_async
async def test_real_ddp_baseline_from_the_panel(card: Card, db: Any, tmp_path: Path) -> None:
    panel = LabPanelScreen(LabRunService(card, "deck-a", db=db, runs_root=tmp_path / "runs"))
    app = HostApp(panel)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        # bounded by the lab's own deadline (90 s + grace): 150 s of polling at most
        await until(pilot, lambda: panel.query_one("#outcome").display, tries=7500)
        outcome = text_of(pilot, "#outcome")
        log_lines = [s.text for s in panel.query_one("#lab-log", RichLog).lines]
    assert panel.controller is not None and panel.controller.status == "ok", outcome
    assert "Observed:      bit-identical" in outcome and "Suggested rating: Easy (4)" in outcome
    assert "✓ held  weights_identical_across_ranks == true" in outcome
    assert any("launching ddp-baseline on 2 ranks" in line for line in log_lines)
    [record] = LabRuns(db).runs(card_id=card.id)
    assert record.status == "ok" and record.summary["checks_passed"] == 4
    assert (record.run_dir / "events-rank1.jsonl").exists()
    result = record.load_result()
    assert result is not None and result["params"]["steps"] == 4
