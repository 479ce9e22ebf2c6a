"""A damaged row in the plan history (values drill never writes, storage.domains) is not in
force: the home screen and `drill plan` say so in one line (naming the cause and `drill db
check`), and neither stops nor silently acts as if there were no plan (issue 33)."""

from __future__ import annotations

import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest
from textual.widgets import Static

import drill.cli.plan as plan_cli
from drill.cli.main import main
from storage.db import open_database
from tests.support.clocks import TUI_START
from tests.support.pilot import run_async, until

DAMAGE = "UPDATE interview_plan SET minutes_per_day = 4.5"
SAYS = "minutes_per_day 4.5 is outside 1..1440"


def damaged_plan(home: Path) -> None:
    path = home / "drill.sqlite3"
    db = open_database(path)
    db.plans.record(date(2026, 3, 20), "training-infra", 45, 0.9, TUI_START)
    db.close()
    conn = sqlite3.connect(path)
    conn.execute(DAMAGE)
    conn.commit()
    conn.close()


@run_async
async def test_home_says_the_plan_is_not_in_force(make_app, home: Path) -> None:
    damaged_plan(home)
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.app.workers.wait_for_complete()
        line = app.screen.query_one("#home-notice", Static)
        await until(pilot, lambda: line.display)
        text = str(line.render())
        assert text.startswith("the interview plan is not in force"), text
        assert SAYS in text and "drill db check" in text
        assert not app.screen.query_one("#home-plan", Static).display  # no plan line


def test_drill_plan_says_the_plan_is_not_in_force(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(plan_cli, "clock", lambda: TUI_START)
    damaged_plan(home)
    assert main(["plan"]) == 0
    captured = capsys.readouterr()
    first = captured.out.splitlines()[0]
    assert first.startswith("the interview plan is not in force") and SAYS in first
    assert "No interview plan. Make one" in captured.out
    assert captured.err.count("\n") == 1 and SAYS in captured.err
    assert "Traceback" not in captured.err
