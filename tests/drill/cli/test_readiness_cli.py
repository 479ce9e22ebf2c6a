"""`drill readiness [--json]` as the user runs it: without a plan (today, and how to set a
date) and with one (the date, the role); --json is plain JSON; --help explains."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

from drill.cli.main import main
from drill.paths import database_path
from drill.times import learner_date
from storage.db import open_database


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as done:
        return int(done.code or 0)


def test_without_a_plan_it_is_today_and_says_how_to_set_a_date(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["readiness"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("readiness today")
    assert lines[1] == "set an interview date: drill plan --date YYYY-MM-DD --role ROLE"
    for section in ("Areas", "Interview phases", "Deck tags", "Weakest five"):
        assert section in lines
    correctness = next(line for line in lines if line.strip().startswith("correctness"))
    assert "············   0%" in correctness  # an empty bar: nothing introduced yet
    assert "→ drill" in out  # each weak item has its action


def test_json_with_a_plan(capsys: pytest.CaptureFixture[str]) -> None:
    today = learner_date(datetime.now(UTC), 4)
    db = open_database(database_path())
    db.plans.record(today + timedelta(days=10), "training-infra", 45, 0.9, datetime.now(UTC))
    db.close()

    assert run(["readiness", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["interview_day"] == (today + timedelta(days=10)).isoformat()
    assert data["recall_on"] == data["interview_day"] and data["role"] == "training-infra"
    kinds = {t["kind"] for t in data["topics"]}
    assert kinds == {"area", "phase", "tag"}
    areas = [t["topic"] for t in data["topics"] if t["kind"] == "area"]
    assert areas == ["correctness", "performance", "reliability", "staff-judgment"]
    assert len(data["weakest"]) == 5 and all(w["action"] for w in data["weakest"])

    assert run(["readiness"]) == 0
    headline = capsys.readouterr().out.splitlines()[0]
    assert headline.startswith(f"interview {data['interview_day']} (in 10 days) · role training")


def test_help_explains(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["readiness", "--help"]) == 0
    out = capsys.readouterr().out
    assert "drill plan --date YYYY-MM-DD --role ROLE" in out
    assert "--json" in out and "weakest" in out
