"""Quitting the app during a run kills the lab's whole process tree and records the run as
cancelled. The fake lab is a real driver + worker pair started in a session of its own and
killed through trainer_lab.procs.kill_tree, the path run_lab uses on cancel."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from drill.decks.models import Card
from drill.labs.runs import LabRuns
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import Event
from tests.support.paths import SUPPORT
from tests.support.pilot import HostApp, choose, run_async, until
from trainer_lab.procs import is_alive, kill_tree

FAKE_LAB = SUPPORT / "fake_lab.py"


class SubprocessRunner:
    def __init__(self, pid_file: Path) -> None:
        self.pid_file = pid_file
        self.started = threading.Event()

    def __call__(
        self,
        name: str,
        params: dict[str, Any],
        world_size: int,
        out_dir: Path,
        timeout_s: float | None,
        on_progress: Any,
        cancel: threading.Event,
    ) -> dict[str, Any]:
        proc = subprocess.Popen(
            [sys.executable, str(FAKE_LAB), str(self.pid_file)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        record = json.loads(proc.stdout.readline())
        on_progress(Event(record["done"], record["total"], record["message"]))
        self.started.set()
        while not cancel.wait(0.05):
            if proc.poll() is not None:
                return {"lab": name, "status": "error", "error": {"message": "fake lab died"}}
        kill_tree(proc.pid)
        proc.wait()
        return {"lab": name, "status": "cancelled", "error": {"message": "lab cancelled"}}


@run_async
async def test_quit_during_run_leaves_no_process(card: Card, db: Any, tmp_path: Path) -> None:
    runner = SubprocessRunner(tmp_path / "pids.json")
    panel = LabPanelScreen(
        LabRunService(card, "deck-a", db=db, runner=runner, runs_root=tmp_path / "runs")
    )
    app = HostApp(panel)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 1)
        await pilot.press("ctrl+r")
        await until(pilot, runner.started.is_set)
        pids = json.loads(runner.pid_file.read_text())
        assert len(pids) == 2 and all(is_alive(pid) for pid in pids)
        await pilot.press("ctrl+q")  # quit the whole app mid-run
    assert [pid for pid in pids if is_alive(pid)] == []
    [record] = LabRuns(db).runs(card_id=card.id)
    assert record.status == "cancelled"


@run_async
async def test_quit_drill_app_during_run(home: Path, card: Card, tmp_path: Path) -> None:
    from drill.paths import database_path
    from drill.tui.screens.lab_panel import open_lab_panel
    from storage.db import open_database
    from tests.support.lab_fakes import drill_app_with_lab_card as _app

    app = _app(tmp_path)
    runner = SubprocessRunner(tmp_path / "pids.json")
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert open_lab_panel(
            app, app.services, card, "d", runner=runner, runs_root=tmp_path / "runs"
        )
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        await choose(pilot, "predict-choice", 1)
        await choose(pilot, "certainty", 0)
        await pilot.press("ctrl+r")
        await until(pilot, runner.started.is_set)
        pids = json.loads(runner.pid_file.read_text())
        assert all(is_alive(pid) for pid in pids)
        app.exit()
    assert [pid for pid in pids if is_alive(pid)] == []
    db = open_database(database_path())
    try:
        [record] = LabRuns(db).runs(card_id=card.id)
    finally:
        db.close()
    assert record.status == "cancelled" and record.predicted == "slightly different"
