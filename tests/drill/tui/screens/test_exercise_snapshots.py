"""Snapshots of the exercise screen at 120x40 and 80x24: task, checks, editor, verdict pane and
the footer's keys (check, hint, solution). Update with
`pytest tests/drill/tui/screens/test_exercise_snapshots.py --snapshot-update`."""

from __future__ import annotations

import pytest
from textual.app import App

from drill.exercises.service import ExerciseService
from drill.tui.screens.exercise import ExerciseScreen


class _App(App[None]):
    def __init__(self, service: ExerciseService) -> None:
        super().__init__()
        self.service = service

    def on_mount(self) -> None:
        self.push_screen(ExerciseScreen(self.service, "ddp-by-hand"))


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_exercise_screen(snap_compare, tmp_path, size):
    app = _App(ExerciseService(None, tmp_path / "exercises"))
    assert snap_compare(app, terminal_size=size)
