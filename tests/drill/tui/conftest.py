"""Fixtures for the TUI tests: a small deck dir, a fixed clock, an app factory (the throwaway
DRILL_HOME comes from the root conftest)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drill.tui.app import AppOptions, DrillApp
from tests.support.clocks import TUI_START, Clock

ALPHA = """\
deck: alpha
title: Alpha deck
cards:
  - id: a1
    level: easy
    front: "What does **DDP** all-reduce?"
    back: Gradients, bucketed, overlapped with backward.
    rubric: [gradients not weights, buckets, overlap with backward]
  - id: a2
    level: medium
    front: Why shard optimizer state?
    back: It is the largest per-rank memory term with Adam.
  - id: a3
    level: hard
    front: What must a resume restore?
    back: Weights, optimizer state, sampler position, RNG state.
"""

BETA = """\
deck: beta
title: Beta deck
cards:
  - id: b1
    level: easy
    front: What is MFU?
    back: Achieved FLOPs over peak FLOPs.
  - id: b2
    level: easy
    front: What does a barrier timeout tell you?
    back: Which rank did not arrive.
"""

START = TUI_START


@pytest.fixture
def deck_dir(tmp_path: Path) -> Path:
    path = tmp_path / "decks"
    path.mkdir()
    (path / "alpha.yaml").write_text(ALPHA)
    (path / "beta.yaml").write_text(BETA)
    return path


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_app(home: Path, deck_dir: Path, clock: Clock) -> Callable[..., DrillApp]:
    def make(start_review: str | None = None, **kwargs: Any) -> DrillApp:
        options = AppOptions(
            deck_dirs=[deck_dir], include_bundled=False, start_review=start_review, now=clock
        )
        return DrillApp(options, **kwargs)

    return make


@pytest.fixture
def query(home: Path) -> Callable[..., list[tuple[Any, ...]]]:
    """Run SQL against the app's database file (what was committed, not what is on screen)."""

    def run(sql: str, *params: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(home / "drill.sqlite3")
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    return run
