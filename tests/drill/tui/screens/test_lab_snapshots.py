"""Snapshots of the lab panel (before and after a run) and the results view: fixed clock, fake
runner and result, fixed terminal size."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from drill.decks.models import Card
from drill.tui.screens.lab_panel import LabPanelScreen
from drill.tui.screens.lab_results import LabResultsScreen
from tests.support.lab_fakes import OK_RESULT, FakeRunner
from tests.support.pilot import HostApp, choose, until
from trainer_lab.result import parse_result

SIZE = (100, 48)
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


class SetClock:
    def __init__(self, value: float = 100.0) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


def _panel(card: Card, db: Any, tmp_path: Path, runner: FakeRunner, clock: SetClock) -> HostApp:
    return HostApp(
        LabPanelScreen(
            card, "deck-a", db=db, runner=runner, clock=clock, now=lambda: NOW,
            runs_root=tmp_path / "runs",
        )
    )  # fmt: skip


def test_lab_panel_before_run(snap_compare, card: Card, db: Any, tmp_path: Path) -> None:
    app = _panel(card, db, tmp_path, FakeRunner(), SetClock())

    async def predict(pilot: Pilot) -> None:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 1)

    assert snap_compare(app, terminal_size=SIZE, run_before=predict)


def test_lab_panel_after_run(snap_compare, card: Card, db: Any, tmp_path: Path) -> None:
    runner, clock = FakeRunner(), SetClock()
    app = _panel(card, db, tmp_path, runner, clock)

    async def run(pilot: Pilot) -> None:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        await pilot.pause()
        clock.value = 106.5
        runner.release.set()
        screen = pilot.app.screen
        await until(pilot, lambda: screen.query_one("#outcome").display)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def _write_events(run_dir: Path) -> None:
    def write(path: Path, records: list[dict[str, Any]]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))

    for mode, jump in (("full", 1.0), ("weights_only", 1.6)):
        for rank in (0, 1):
            write(
                run_dir / "runs" / mode / f"events-rank{rank}.jsonl",
                [
                    {"event": "step", "rank": rank, "step": s, "run": mode,
                     "loss": (2.0 - 0.1 * s) * (jump if s > 5 else 1.0),
                     "phases": {"forward": 0.002 + 0.001 * rank, "backward": 0.004,
                                "grad_sync": 0.001 * (1 + rank)}}
                    for s in range(1, 11)
                ]
                + [{"event": "memory", "rank": rank, "total": (8 + 4 * rank) * 2**20}],
            )  # fmt: skip


def test_results_view(snap_compare) -> None:
    # a fixed path: the view prints the run dir
    run_dir = Path(tempfile.gettempdir()) / "drill-tui-labs-snapshot-run"
    shutil.rmtree(run_dir, ignore_errors=True)
    _write_events(run_dir)
    result = parse_result({**OK_RESULT, "lab": "resume", "params": {"steps": 10}, "world_size": 2})
    app = HostApp(LabResultsScreen(result, run_dir, "Results · resume"))
    assert snap_compare(app, terminal_size=(100, 70))
