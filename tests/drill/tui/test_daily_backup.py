"""The app takes one automatic database backup a day, after the start-up load, off the UI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drill.tui.app import DrillApp
from tests.support.pilot import run_async


async def _start_and_quit(app: DrillApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()  # the backup worker starts after the load


@run_async
async def test_one_backup_per_day_is_taken_at_start(
    home: Path, make_app: Callable[..., DrillApp]
) -> None:
    await _start_and_quit(make_app())  # first run creates the database: nothing to back up yet
    backups = home / "backups"
    assert (home / "drill.sqlite3").is_file()
    first = sorted(backups.glob("drill-*.sqlite3")) if backups.exists() else []
    await _start_and_quit(make_app())
    await _start_and_quit(make_app())
    taken = sorted(backups.glob("drill-*.sqlite3"))
    assert len(taken) == 1 and len(first) <= 1, taken
