"""Root fixtures: every test runs with a throwaway DRILL_HOME and no user decks from the
environment; small decks and clocks for the tests that need them."""

from __future__ import annotations

import inspect
import signal
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.clocks import Clock
from tests.support.pilot import screen_text, steady_cursors


def pytest_configure(config: pytest.Config) -> None:
    """A suite started as a background job of a non-interactive shell (`.ci/run &`) inherits
    SIGINT and SIGQUIT ignored, and every process it starts would too: Python then installs no
    KeyboardInterrupt handler, so the tests that send Ctrl-C to a real drill, and those that
    compare a warm-launched rank with a fresh one, would see a machine no user has. Give the
    run the dispositions of a terminal; a caught signal is reset to the default in a child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


SMALL_DECK = """\
deck: basics
title: Basics
cards:
  - id: alpha
    level: easy
    front: What is alpha?
    back: The first.
  - id: beta
    level: medium
    front: What is beta?
    back: The second.
  - id: gamma
    level: hard
    front: What is gamma?
    back: The third.
"""


@pytest.fixture(autouse=True)
def drill_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets a throwaway DRILL_HOME and no user decks from the environment."""
    home = tmp_path / "home"
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.delenv("DRILL_DECKS", raising=False)
    return home


@pytest.fixture(autouse=True)
def _cpu_path_unless_marked_gpu(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labs take CUDA (NCCL with W <= visible GPUs) whenever it is visible, and the lab tests'
    numbers are the CPU path's: a test not marked `gpu` hides CUDA from every process it starts
    (CUDA_VISIBLE_DEVICES="" reaches torchrun and the ranks through the launcher's env), so the
    suite passes on a GPU machine too. GPU tests carry `gpu` (tests.support.devices.needs_cuda)."""
    if request.node.get_closest_marker("gpu") is None:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


@pytest.fixture
def home(drill_home: Path) -> Path:
    """The isolated DRILL_HOME under its short name."""
    return drill_home


@pytest.fixture
def deck_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "decks"
    directory.mkdir()
    (directory / "basics.yaml").write_text(SMALL_DECK)
    return directory


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))


@pytest.fixture
def write_deck(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(name: str, text: str) -> Path:
        path = tmp_path / "check" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return path

    return write


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's comparison, with every cursor held still before the
    screenshot: whatever a test's `run_before` does, the blink phase of a focused input or text
    area never decides whether a snapshot matches (a loaded CI worker took one in the off
    phase). Keys in `press` are sent before the cursors are steadied, as the plugin would."""

    def compare(
        app: Any,
        press: Iterable[str] = (),
        terminal_size: tuple[int, int] = (80, 24),
        run_before: Callable[[Pilot], Any] | None = None,
        **options: Any,
    ) -> bool:
        async def then_steady(pilot: Pilot) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await pilot.pause()
            await pilot.press(*press)
            steady_cursors(pilot.app)
            await pilot.pause()
            seen.append(screen_text(pilot.app))

        seen: list[str] = []
        matched = snap_compare(app, terminal_size=terminal_size, run_before=then_steady, **options)
        if not matched and seen:  # the CI log shows what was on screen, not only "mismatched"
            print("--- the screen before the snapshot ---\n" + seen[-1])
        return matched

    return compare
