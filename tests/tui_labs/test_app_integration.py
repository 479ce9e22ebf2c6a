"""The lab screens inside the real DrillApp: `L` opens the labs screen, which fills in linked
cards once the app has loaded; the panel opened on the review screen's card rates it through
the review session."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from textual.widgets import DataTable

from drill.tui.app import AppOptions, DrillApp
from drill.tui.lab_panel import LabPanelScreen, open_lab_panel
from drill.tui.labs_screen import LabsScreen
from tests.tui.helpers import run_async
from tests.tui_labs.conftest import CARD_YAML, FakeRunner
from tests.tui_labs.test_panel_flow import choose, until

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def _app(tmp_path: Path) -> DrillApp:
    decks = tmp_path / "decks"
    decks.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks / "d.yaml").write_text(yaml.safe_dump(deck))
    options = AppOptions(deck_dirs=[decks], include_bundled=False, now=lambda: NOW)
    return DrillApp(options)


@run_async
async def test_labs_screen_from_home(home: Path, tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabsScreen))
        screen = app.screen
        assert isinstance(screen, LabsScreen)
        await until(pilot, lambda: screen.db is not None)
        await pilot.pause()
        assert screen.query_one("#labs", DataTable).get_row("ddp-baseline")[2] == "1"


@run_async
async def test_panel_rates_through_the_review_session(home: Path, tmp_path: Path) -> None:
    app = _app(tmp_path)
    runner = FakeRunner()
    runner.release.set()
    rated: list[int | None] = []
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("a")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        review: Any = app.screen
        await until(pilot, lambda: review.session is not None)
        session = review.session
        assert session.current.card.id == "ddp-equals-single"
        opened = open_lab_panel(
            app, review.card, review.card_deck, session=session, callback=rated.append,
            runner=runner, runs_root=tmp_path / "runs",
        )  # fmt: skip
        assert opened
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 1)
        await pilot.press("ctrl+r")
        panel: Any = app.screen
        await until(pilot, lambda: panel.query_one("#outcome").display)
        await pilot.press("enter")
        await until(pilot, lambda: rated == [3])
        assert session.stats.reviewed == 1  # a new card rated Good comes back as learning
        assert session.current is not None and not session.current.is_new
        assert [(r.card_id, r.rating) for r in app.backend.heavy.db.reviews()] == [
            ("ddp-equals-single", 3)
        ]


@run_async
async def test_l_on_the_review_screen_rates_and_shows_the_next_card(
    home: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    runner = FakeRunner()
    runner.release.set()
    monkeypatch.setattr("drill.lab_session.default_runner", lambda: runner)
    app = _app(tmp_path)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("a")
        review: Any = app.screen
        await until(pilot, lambda: review.session is not None)
        await pilot.press("space")  # reveal, then open the lab from the revealed card
        await until(pilot, lambda: review.revealed)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 1)
        await pilot.press("ctrl+r")
        panel: Any = app.screen
        await until(pilot, lambda: panel.query_one("#outcome").display)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is review)
        await until(pilot, lambda: not review.revealed)
        # rated Good: it comes straight back as a learning card, shown afresh (front only)
        assert review.session.stats.reviewed == 1
        assert review.card is not None and review.card.id == "ddp-equals-single"
        assert runner.calls and runner.calls[0]["name"] == "ddp-baseline"
