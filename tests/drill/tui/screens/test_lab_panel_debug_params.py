"""Every lab's sabotage and debug params wait behind ctrl+t (issue 34): a param whose help
documents a value that breaks the lab ("debug VALUE: ...", as hang's death, pg_timeout_s and
blame do) is a debug switch like one whose help starts "debug:"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual.widgets import Label

from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import FakeRunner
from tests.support.pilot import HostApp, run_async
from trainer_lab.catalogue import CATALOGUE

# How the catalogue's help texts mark a switch that breaks a lab (read here, not from drill).
BREAKS_THE_LAB = re.compile(r"\bdebug\b")


def rows_on_screen(panel: LabPanelScreen) -> dict[str, bool]:
    return {
        str(row.query_one(Label).render()): row.region.height > 0
        for row in panel.query(".param-row")
    }


@run_async
async def test_no_lab_shows_a_debug_param_before_ctrl_t(db: Any, tmp_path: Path) -> None:
    checked = 0
    for name, spec in sorted(CATALOGUE.items()):
        service = LabRunService(None, None, db=db, runner=FakeRunner(), lab=name,
                                runs_root=tmp_path / "runs")  # fmt: skip
        panel = LabPanelScreen(service)
        app = HostApp(panel)
        async with app.run_test(size=(120, 200)) as pilot:
            await pilot.pause()
            before = rows_on_screen(panel)
            await pilot.press("ctrl+t")
            await pilot.pause()
            after = rows_on_screen(panel)
        assert before.pop("world size") is True, name
        for param in spec.params:
            debug = param.name == "sabotage" or bool(BREAKS_THE_LAB.search(param.help))
            assert before[param.name] is not debug, (name, param.name, param.help)
            assert after[param.name] is True, (name, param.name)  # ctrl+t shows them all
            checked += debug
    assert checked > len(CATALOGUE) // 2  # the rule was exercised, not vacuous
