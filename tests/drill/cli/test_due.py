"""`drill due` counts from the deck cache as plain data when it is fresh (issue 40: no model per
card, no loader), and from the validated decks when it is not; the counts are the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from drill.decks.loader import load_decks
from drill.paths import database_path
from storage.db import open_database

# Run `drill due --json` in a fresh interpreter; report its output and which modules it loaded.
CHILD = """
import contextlib, io, json, sys
from drill.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--decks", sys.argv[1], "due", "--json"])
heavy = ("drill.decks.loader", "pydantic")
print(json.dumps({"code": code, "due": json.loads(out.getvalue()),
                  "loaded": sorted(m for m in heavy if m in sys.modules)}))
"""


def _due(deck_dir: Path, home: Path) -> dict[str, object]:
    env = {**os.environ, "DRILL_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(deck_dir)], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_due_reads_a_fresh_deck_cache_without_the_loader(home: Path, deck_dir: Path) -> None:
    load_decks([deck_dir])  # a previous run validated the decks (bundled ones too)
    open_database(database_path()).close()
    report = _due(deck_dir, home)
    assert report["code"] == 0 and report["loaded"] == []
    decks = {d["deck"]: d["new"] for d in report["due"]["decks"]}  # type: ignore[index]
    assert decks["basics"] == 3


def test_due_validates_when_the_cache_is_stale_and_counts_the_same(
    home: Path, deck_dir: Path
) -> None:
    load_decks([deck_dir])
    open_database(database_path()).close()
    fresh = _due(deck_dir, home)
    (deck_dir / "basics.yaml").write_text((deck_dir / "basics.yaml").read_text() + "\n")
    stale = _due(deck_dir, home)
    assert "drill.decks.loader" in stale["loaded"]  # type: ignore[operator]
    assert stale["due"] == fresh["due"]
    assert _due(deck_dir, home)["loaded"] == []  # the slow path refreshed the cache
