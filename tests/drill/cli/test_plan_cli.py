"""`drill plan` as the user runs it, with a fixed clock: set, show, change (history kept), clear;
every bad input is one line on stderr with exit 2 and writes nothing; --json is plain JSON; two
drills setting a plan at once both keep their row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta

import pytest

import drill.cli.plan as plan_cli
from drill.cli.main import main
from drill.paths import database_path
from storage.db import open_database

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
IN_TEN_DAYS = "2026-03-12"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(plan_cli, "clock", lambda: NOW)


def run(argv: list[str]) -> int:
    """main(argv)'s exit status, argparse's usage errors (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as done:
        return int(done.code or 0)


def _history() -> list[tuple[str, str, int, bool]]:
    if not database_path().exists():
        return []
    db = open_database(database_path())
    try:
        return [(str(p.interview_day), p.role, p.minutes_per_day, ended)
                for p, ended in db.plans.history()]  # fmt: skip
    finally:
        db.close()


def test_without_a_plan_it_says_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No interview plan. Make one: drill plan --date YYYY-MM-DD --role ROLE")
    assert "training-infra, research-engineer, applied-ml, biotech-ml" in out


def test_set_show_change_and_clear_keep_every_change(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--date", IN_TEN_DAYS, "--role", "training-infra"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"plan set: {IN_TEN_DAYS} · training-infra · 45 min/day\n")
    assert f"Interview {IN_TEN_DAYS} (in 10 days)" in out
    assert "role: training-infra (Training infrastructure engineer)" in out
    assert "coverage: the budget" in out

    assert main(["plan"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"Interview {IN_TEN_DAYS} (in 10 days)\n")
    assert "budget: 45 min/day" in shown

    assert main(["plan", "--date", "2026-03-20"]) == 0  # the role and budget are kept
    assert main(["plan", "--role", "biotech-ml", "--minutes", "30"]) == 0
    assert main(["plan", "--minutes", "30"]) == 0  # the same profile: no new row
    out = capsys.readouterr().out
    assert "plan changed: 2026-03-20 · biotech-ml · 30 min/day" in out
    assert "the plan is unchanged" in out
    assert _history() == [
        (IN_TEN_DAYS, "training-infra", 45, False),
        ("2026-03-20", "training-infra", 45, False),
        ("2026-03-20", "biotech-ml", 30, False),
    ]

    assert main(["plan", "--clear"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan cleared: scheduling is plain FSRS (the history is kept)\n")
    assert "No interview plan." in out and out.rstrip().endswith("cleared")
    assert out.count(" min/day") == 3  # the three profiles, in the changes
    assert main(["plan", "--clear"]) == 0
    assert capsys.readouterr().out.startswith("no interview plan to clear\n")
    assert len(_history()) == 4


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--date", "2026-03-01", "--role", "training-infra"],
            "drill: error: the interview date 2026-03-01 is in the past (today is 2026-03-02)",
        ),
        (
            ["--date", "2026-03-02", "--role", "training-infra"],
            "drill: error: the interview date 2026-03-02 is today: choose a day after today",
        ),
        (
            ["--date", "2027-03-03", "--role", "training-infra"],
            "drill: error: the interview date 2027-03-03 is more than a year out",
        ),
        (
            ["--date", IN_TEN_DAYS, "--role", "data-scientist"],
            "drill: error: unknown role 'data-scientist' (known: training-infra, "
            "research-engineer, applied-ml, biotech-ml)",
        ),
        (
            ["--date", IN_TEN_DAYS, "--role", "training-infra", "--minutes", "0"],
            "drill: error: minutes per day 0 is outside 5..600",
        ),
        (
            ["--date", IN_TEN_DAYS, "--role", "training-infra", "--minutes", "9999"],
            "drill: error: minutes per day 9999 is outside 5..600",
        ),
        (
            ["--date", "12/03/2026", "--role", "training-infra"],
            "drill plan: error: argument --date: '12/03/2026' is not a date (YYYY-MM-DD)",
        ),
        (
            ["--date", "2026-02-30", "--role", "training-infra"],
            "drill plan: error: argument --date: '2026-02-30' is not a date",
        ),
        (["--minutes", "lots"], "drill plan: error: argument --minutes: invalid int value"),
        (["--date", IN_TEN_DAYS], "drill: error: no interview plan yet: give --role too"),
        (["--role", "training-infra"], "drill: error: no interview plan yet: give --date too"),
        (["--clear", "--date", IN_TEN_DAYS], "drill: error: --clear ends the plan: give it alone"),
        (["--date", "\x1b[31m2026"], "'\\x1b[31m2026' is not a date"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert run(["plan", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert says in err and err.count("\n") == 1 and "\x1b" not in err, err
    assert "Traceback" not in err and captured.out == ""
    assert _history() == []


def test_a_bad_change_keeps_the_plan_in_force(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--date", IN_TEN_DAYS, "--role", "training-infra"]) == 0
    assert main(["plan", "--date", "2026-02-01"]) == 2
    assert main(["plan", "--role", "nope"]) == 2
    capsys.readouterr()
    assert _history() == [(IN_TEN_DAYS, "training-infra", 45, False)]


def test_json_is_plain_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--json"]) == 0
    empty = json.loads(capsys.readouterr().out)
    assert empty["plan"] is None and empty["history"] == [] and empty["to_introduce"] > 0
    assert main(["plan", "--date", IN_TEN_DAYS, "--role", "training-infra", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["plan"]["interview_day"] == IN_TEN_DAYS and data["days_left"] == 10
    assert data["plan"]["title"] == "Training infrastructure engineer"
    assert data["coverage"]["cards"] == data["to_introduce"]
    assert len(data["history"]) == 1 and data["history"][0]["ended"] is False


def test_help_explains_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["plan", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for words in ("--date YYYY-MM-DD", "--role ROLE", "--minutes N", "--clear", "--json",
                  "Every change is kept"):  # fmt: skip
        assert words in out


def test_two_drills_setting_a_plan_at_once_both_keep_their_row() -> None:
    day = (date.today() + timedelta(days=10)).isoformat()
    env = {**os.environ, "TZ": "UTC"}
    command = [sys.executable, "-m", "drill", "plan", "--date", day, "--role"]
    children = [
        subprocess.Popen([*command, role], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for role in ("training-infra", "applied-ml")
    ]  # fmt: skip
    for child in children:
        _out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    assert sorted(role for _, role, _, _ in _history()) == ["applied-ml", "training-infra"]
