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
