"""The first review card is painted before any heavy module is imported (checked in a fresh
process: sys.modules at the moment of the first paint)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database
from tests.support.paths import SUPPORT

CHILD = SUPPORT / "first_paint_child.py"


def test_first_card_paints_without_heavy_imports(home: Path, deck_dir: Path) -> None:
    # Warm start: the deck cache and the database exist (a previous run made them).
    load_decks([deck_dir], include_bundled=False)
    open_database(database_path()).close()
    env = {**os.environ, "DRILL_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, str(CHILD), str(deck_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    report = json.loads(lines[0])
    assert report == {"card": "a1", "loaded": []}


def test_first_paint_with_an_interview_plan_stays_light(home: Path, deck_dir: Path) -> None:
    # The plan's overlay (drill.review.deadline) and the role table (tomllib) are read at first
    # paint: still none of the heavy modules (fsrs among them).
    from datetime import UTC, date, datetime, timedelta

    load_decks([deck_dir], include_bundled=False)
    db = open_database(database_path())
    now = datetime.now(UTC)
    db.plans.record(date.today() + timedelta(days=10), "training-infra", 45, 0.9, now)
    db.close()
    env = {**os.environ, "DRILL_HOME": str(home)}
    # -P: the child's folder (tests/support, whose decks.py would shadow the decks package
    # the role table is read from) is not put first on sys.path
    done = subprocess.run([sys.executable, "-P", str(CHILD), str(deck_dir)], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert json.loads(lines[0])["loaded"] == []
