"""Builders shared by the lab panel and labs list screen tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import yaml

from drill.decks.models import Card
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import CARD_YAML, FakeRunner


def make_panel(card: Card, db: Any, runner: FakeRunner, tmp_path: Path) -> LabPanelScreen:
    """The lab panel over a fake runner, with a clock that advances half a second a call."""
    ticks = itertools.count()
    return LabPanelScreen(LabRunService(
        card, "deck-a", db=db, runner=runner, runs_root=tmp_path / "runs",
        clock=lambda: float(next(ticks)) * 0.5,
    ))  # fmt: skip


def one_card_decks(tmp_path: Path) -> Path:
    """A decks folder holding one deck with the lab-linked card of tests.support.lab_fakes."""
    decks = tmp_path / "decks"
    decks.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks / "d.yaml").write_text(yaml.safe_dump(deck))
    return decks
