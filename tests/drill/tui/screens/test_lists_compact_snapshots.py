"""The labs list, the exercises list and the mock-round picker at 80x24 and 120x40: names,
counts and keys (run, past runs, open, start, back) stay visible."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.pilot import Pilot

from drill.database import open_app_database as open_database
from drill.decks.loader import load_decks
from drill.tui.screens.exercises import ExercisesScreen
from drill.tui.screens.labs import LabsScreen
from drill.tui.screens.mock_picker import MockPickerScreen
from tests.support.lab_fakes import CARD_YAML, OK_RESULT
from tests.support.lab_screens import record_lab_run
from tests.support.pilot import HostApp
from tests.support.services import slot_for

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_labs_list(snap_compare, db: Any, card: Any, tmp_path: Path, size) -> None:  # type: ignore[no-untyped-def]
    decks_dir = tmp_path / "decks"
    decks_dir.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks_dir / "d.yaml").write_text(yaml.safe_dump(deck))
    old_dir = tmp_path / "old-run"
    old_dir.mkdir()
    (old_dir / "result.json").write_text(json.dumps(OK_RESULT))
    record_lab_run(db, card, old_dir, datetime(2026, 3, 9, 8, 30, tzinfo=UTC))
    decks = load_decks([decks_dir], include_bundled=False)
    app = HostApp(LabsScreen(slot_for(decks, db), runs_root=tmp_path / "runs"))
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_exercises_list(snap_compare, tmp_path: Path, size) -> None:  # type: ignore[no-untyped-def]
    db = open_database(tmp_path / "db.sqlite3")
    slot = slot_for(None, db, exercises_home=tmp_path / "exercises")
    app = HostApp(ExercisesScreen(slot))
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_mock_picker(snap_compare, home: Path, size) -> None:  # type: ignore[no-untyped-def]
    slot = slot_for(None, open_database(home / "db.sqlite3"))
    app = HostApp(MockPickerScreen(slot))
    assert snap_compare(app, terminal_size=size, run_before=settle)
