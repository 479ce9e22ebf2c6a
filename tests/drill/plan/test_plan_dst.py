"""`drill plan` across a daylight-saving change before the date (Europe/Berlin moves its clocks
forward on 2026-03-29, 02:00 -> 03:00): days left are learner days (the day starts at 04:00
local), never hours / 24, and the date itself is still accepted (issue 33, bad input and edges)."""

from __future__ import annotations

import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import drill.cli.plan as plan_cli
from drill.cli.main import main

BERLIN = ZoneInfo("Europe/Berlin")
INTERVIEW = "2026-04-02"


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()


def shown_at(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             moment: datetime) -> str:  # fmt: skip
    monkeypatch.setattr(plan_cli, "clock", lambda: moment)
    assert main(["plan"]) == 0
    return capsys.readouterr().out.splitlines()[0]


@pytest.mark.usefixtures("home")
def test_days_left_count_learner_days_across_the_change(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(plan_cli, "clock", lambda: datetime(2026, 3, 28, 12, tzinfo=BERLIN))
    assert main(["plan", "--date", INTERVIEW, "--role", "training-infra"]) == 0
    capsys.readouterr()
    cases = [
        (datetime(2026, 3, 28, 23, 30, tzinfo=BERLIN), 5),
        (datetime(2026, 3, 29, 3, 30, tzinfo=BERLIN), 5),  # after the change, before 04:00
        (datetime(2026, 3, 29, 4, 30, tzinfo=BERLIN), 4),  # a 23-hour day later
        (datetime(2026, 4, 2, 3, 59, tzinfo=BERLIN), 1),
    ]
    for moment, days in cases:
        line = shown_at(monkeypatch, capsys, moment)
        assert line == f"Interview {INTERVIEW} (in {days} day{'s' if days != 1 else ''})", moment
    assert shown_at(monkeypatch, capsys, datetime(2026, 4, 2, 4, 0, tzinfo=BERLIN)) == (
        f"Interview {INTERVIEW} (today)"
    )
