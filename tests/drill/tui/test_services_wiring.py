"""The app hands its screens one services object, built once after the first paint: a screen
opened before it arrives waits for it instead of building its own services over nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from drill import database
from drill.exercises.progress import ProgressStore
from drill.exercises.service import ExerciseService
from drill.tui.app import DrillApp
from drill.tui.screens.exercises import ExercisesScreen
from tests.support.pilot import run_async, until


@pytest.fixture
def slow_database(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Opening the app's database waits until the returned event is set."""
    release = threading.Event()
    real = database.open_app_database

    def open_when_released(path: Path | None = None) -> Any:
        release.wait(timeout=60)
        return real(path)

    monkeypatch.setattr(database, "open_app_database", open_when_released)
    return release


@run_async
async def test_x_right_after_start_shows_the_progress_once_the_database_loaded(
    make_app: Callable[..., DrillApp], home: Path, slow_database: threading.Event
) -> None:
    db = database.open_database(database.database_path())  # not the slowed entry
    ExerciseService(db, home / "exercises").start("first-nan")
    db.close()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("X")  # the database is still loading
        await until(pilot, lambda: isinstance(app.screen, ExercisesScreen))
        screen = app.screen
        assert isinstance(screen, ExercisesScreen)
        slow_database.set()

        def status(name: str) -> str | None:
            if name not in screen.names:
                return None
            table = screen.query_one("#exercises", DataTable)
            return str(table.get_row_at(screen.names.index(name))[2])

        await until(pilot, lambda: status("first-nan") == "started")
        title = str(screen.query_one("#exs-title", Static).render())
        assert f"0/{len(screen.names)} solved" in title


@run_async
async def test_x_before_the_database_loaded_counts_a_solved_exercise(
    make_app: Callable[..., DrillApp],
    home: Path,
    slow_database: threading.Event,
) -> None:
    db = database.open_database(database.database_path())  # not the slowed entry
    ProgressStore(db).record_check("first-nan", {"status": "ok", "checks": []})  # type: ignore[typeddict-item]
    db.close()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("X")  # the database is still loading
        await until(pilot, lambda: isinstance(app.screen, ExercisesScreen))
        screen = app.screen
        assert isinstance(screen, ExercisesScreen)
        title = lambda: str(screen.query_one("#exs-title", Static).render())  # noqa: E731
        assert "loading" in title()
        slow_database.set()
        await until(pilot, lambda: "solved" in title())
        assert f"1/{len(screen.names)} solved" in title()
