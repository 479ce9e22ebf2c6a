"""Snapshots of the lab panel (before and after a run) and the results view: fixed clock, fake
runner and result, fixed terminal size; again at 80x24 and 120x40, where the keys (run, leave,
accept, results), the prediction and the verdict must stay visible."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from drill.decks.models import Card
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from drill.tui.screens.lab_results import LabResultsScreen
from tests.support.clocks import FakeClock
from tests.support.lab_fakes import OK_RESULT, FakeRunner
from tests.support.pilot import HostApp, choose, until
from trainer_lab.result import parse_result

SIZE = (100, 48)
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
RESULTS_RUN_DIR = "drill-tui-labs-snapshot-run"


def _panel(card: Card, db: Any, tmp_path: Path, runner: FakeRunner, clock: FakeClock) -> HostApp:
    return HostApp(
        LabPanelScreen(LabRunService(
            card, "deck-a", db=db, runner=runner, clock=clock, now=lambda: NOW,
            runs_root=tmp_path / "runs",
        ))
    )  # fmt: skip


async def choose_visible(pilot: Pilot, set_id: str, index: int) -> None:
    """Click a radio button, scrolled into view first (80x24 shows part of the form)."""
    await until(pilot, lambda: len(pilot.app.screen.query(f"#{set_id} RadioButton")) > index)
    button = pilot.app.screen.query(f"#{set_id} RadioButton")[index]
    button.scroll_visible(animate=False, immediate=True)
    await pilot.pause()
    await choose(pilot, set_id, index)


async def _predict(pilot: Pilot) -> None:
    await pilot.pause()
    await choose_visible(pilot, "predict-choice", 0)
    await choose_visible(pilot, "certainty", 1)


def test_lab_panel_before_run(snap_compare, card: Card, db: Any, tmp_path: Path) -> None:
    app = _panel(card, db, tmp_path, FakeRunner(), FakeClock(100.0))
    assert snap_compare(app, terminal_size=SIZE, run_before=_predict)


@pytest.mark.parametrize("size", SIZES)
def test_lab_panel_before_run_at(snap_compare, card: Card, db: Any, tmp_path: Path, size) -> None:  # type: ignore[no-untyped-def]
    app = _panel(card, db, tmp_path, FakeRunner(), FakeClock(100.0))
    assert snap_compare(app, terminal_size=size, run_before=_predict)


def _after_run(card: Card, db: Any, tmp_path: Path) -> tuple[HostApp, Any]:
    runner, clock = FakeRunner(), FakeClock(100.0)
    app = _panel(card, db, tmp_path, runner, clock)

    async def run(pilot: Pilot) -> None:
        await pilot.pause()
        await choose_visible(pilot, "predict-choice", 0)
        await choose_visible(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        await pilot.pause()
        clock.t = 106.5
        runner.release.set()
        screen = pilot.app.screen
        await until(pilot, lambda: screen.query_one("#outcome").display)
        body, outcome = screen.query_one("#lab-body"), screen.query_one("#outcome")
        # the panel scrolls to the outcome once it is laid out: wait for that (on a loaded
        # machine the snapshot was once taken before it)
        await until(pilot, lambda: outcome.size.height > 0 and body.scroll_y == body.max_scroll_y)
        await pilot.pause()

    return app, run


def test_lab_panel_after_run(snap_compare, card: Card, db: Any, tmp_path: Path) -> None:
    app, run = _after_run(card, db, tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


@pytest.mark.parametrize("size", SIZES)
def test_lab_panel_after_run_at(snap_compare, card: Card, db: Any, tmp_path: Path, size) -> None:  # type: ignore[no-untyped-def]
    app, run = _after_run(card, db, tmp_path)
    assert snap_compare(app, terminal_size=size, run_before=run)


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


def _results_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HostApp:
    # The view prints the run dir: a relative one (from inside tmp_path) reads the same
    # whatever TMPDIR is, and no two tests share it.
    monkeypatch.chdir(tmp_path)
    run_dir = Path(RESULTS_RUN_DIR)
    _write_events(run_dir)
    result = parse_result({**OK_RESULT, "lab": "resume", "params": {"steps": 10}, "world_size": 2})
    return HostApp(LabResultsScreen(result, run_dir, "Results · resume"))


def test_results_view(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert snap_compare(_results_app(tmp_path, monkeypatch), terminal_size=(100, 70))


@pytest.mark.parametrize("size", SIZES)
def test_results_view_at(
    snap_compare, size, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(_results_app(tmp_path, monkeypatch), terminal_size=size)
