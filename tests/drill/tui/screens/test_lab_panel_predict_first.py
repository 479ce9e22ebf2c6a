"""The lab panel does not give the answer away (issue 26): on a card with a predict block the
lab's summary (which states the answer) shows only once the prediction is made; focus starts on
the prediction; a chosen choice differs from the others by its glyph, not only its colour; the
sabotage and debug params wait behind ctrl+t; a param's name never wraps inside a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Label, RadioButton, RadioSet, Static

from drill.decks.models import Card
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import FakeRunner
from tests.support.lab_screens import make_panel
from tests.support.pilot import HostApp, run_async, screen_text, until
from trainer_lab.catalogue import CATALOGUE

ANSWER = "gradients are identical on every rank"  # in ddp-baseline's summary


def glyphs(panel: LabPanelScreen, set_id: str) -> list[str]:
    buttons = panel.query(f"#{set_id} RadioButton").results(RadioButton)
    return [str(button.render())[1] for button in buttons]  # ▐X▌ label: X


@run_async
async def test_predict_first_and_the_summary_after_it(card: Card, db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    runner.release.set()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert ANSWER in CATALOGUE["ddp-baseline"].summary
        assert ANSWER not in " ".join(screen_text(app).split())
        assert app.focused is panel.query_one("#predict-choice", RadioSet)
        assert glyphs(panel, "predict-choice") == ["○", "○"]
        # keyboard only: down to the second choice, enter picks it; tab to the certainty
        await pilot.press("down", "enter")
        assert glyphs(panel, "predict-choice") == ["○", "●"]
        await pilot.press("tab")
        assert app.focused is panel.query_one("#certainty", RadioSet)
        await pilot.press("enter")
        assert glyphs(panel, "certainty") == ["●", "○", "○"]
        assert ANSWER not in " ".join(screen_text(app).split())  # not before the run
        await pilot.press("ctrl+r")
        await until(pilot, lambda: bool(runner.calls))
        await until(pilot, lambda: panel.query_one("#lab-summary", Static).display)
        await pilot.pause()
        assert ANSWER in " ".join(screen_text(app).split())


@run_async
async def test_a_lab_without_a_card_shows_its_summary_at_once(db: Any, tmp_path: Path) -> None:
    service = LabRunService(None, None, db=db, runner=FakeRunner(), lab="ddp-baseline",
                            runs_root=tmp_path / "runs")  # fmt: skip
    panel = LabPanelScreen(service)
    app = HostApp(panel)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert ANSWER in " ".join(screen_text(app).split())
        assert app.focused is panel.query_one("#param-world")


def shown_rows(panel: LabPanelScreen) -> dict[str, bool]:
    return {str(row.query_one(Label).render()): row.display for row in panel.query(".param-row")}


@run_async
async def test_sabotage_waits_behind_ctrl_t(db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    service = LabRunService(None, None, db=db, runner=runner, lab="ddp-baseline",
                            runs_root=tmp_path / "runs")  # fmt: skip
    panel = LabPanelScreen(service)
    app = HostApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = shown_rows(panel)
        assert rows["sabotage"] is False and rows["steps"] is True
        assert "^t Advanced" in screen_text(app).splitlines()[-1]
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert shown_rows(panel)["sabotage"] is True
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert shown_rows(panel)["sabotage"] is False
        # hidden, its value still goes to the run (the lab's own default)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: bool(runner.calls))
        assert runner.calls[0]["params"]["sabotage"] == "none"


@run_async
async def test_a_predict_card_opens_on_the_prediction_with_its_settings_behind_ctrl_t(
    card: Card, db: Any, tmp_path: Path
) -> None:
    runner = FakeRunner()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = shown_rows(panel)
        assert rows.pop("world size") is True
        assert set(rows.values()) == {False}  # every param of the lab, and its help
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert set(shown_rows(panel).values()) == {True}
        await pilot.press("ctrl+t", "enter", "tab", "enter", "ctrl+r")  # the card's values run
        await until(pilot, lambda: bool(runner.calls))
        assert runner.calls[0]["params"]["steps"] == 4  # the card's, not the lab's default


@run_async
async def test_long_param_names_stay_on_one_line(db: Any, tmp_path: Path) -> None:
    service = LabRunService(None, None, db=db, runner=FakeRunner(), lab="hang",
                            runs_root=tmp_path / "runs")  # fmt: skip
    panel = LabPanelScreen(service)
    app = HostApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        labels = [label for label in panel.query(".param-row Label").results(Label)]
        names = [str(label.render()) for label in labels]
        assert "collective_timeout_s" in names
        for label in labels:
            if label.region.height:  # shown (the debug ones are hidden)
                assert label.region.height == 1 and label.region.width > len(str(label.render()))
        assert "collective_timeout_s" in screen_text(app)
