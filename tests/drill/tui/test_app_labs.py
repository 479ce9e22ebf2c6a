"""The lab screens inside the real DrillApp: `L` opens the labs screen, which fills in linked
cards once the app has loaded; the panel opened on the review screen's card rates it through
the review session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable

from drill.tui.screens.lab_panel import LabPanelScreen, open_lab_panel
from drill.tui.screens.labs import LabsScreen
from tests.support.lab_fakes import FakeRunner, drill_app_with_lab_card
from tests.support.pilot import choose, run_async, until


@run_async
async def test_labs_screen_from_home(home: Path, tmp_path: Path) -> None:
    app = drill_app_with_lab_card(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabsScreen))
        screen = app.screen
        assert isinstance(screen, LabsScreen)
        await until(pilot, lambda: screen.db is not None)
        await pilot.pause()
        assert str(screen.query_one("#labs", DataTable).get_row("ddp-baseline")[2]) == "1"


@run_async
async def test_panel_rates_through_the_review_session(home: Path, tmp_path: Path) -> None:
    app = drill_app_with_lab_card(tmp_path)
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
            app, app.services, review.card, review.card_deck, session=session,
            callback=rated.append, runner=runner, runs_root=tmp_path / "runs",
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
        assert [(r.card_id, r.rating) for r in app.services.db.review.reviews()] == [
            ("ddp-equals-single", 3)
        ]


@run_async
async def test_l_on_the_review_screen_rates_and_shows_the_next_card(
    home: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    runner = FakeRunner()
    runner.release.set()
    monkeypatch.setattr("drill.labs.controller.default_runner", lambda: runner)
    app = drill_app_with_lab_card(tmp_path)
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
        # the rated card's back stays on screen (the user came to learn the answer)
        await until(pilot, lambda: review.rated_in_lab == 3)
        assert review.revealed and review.query_one("#back").display
        assert "Rated Good in the lab" in str(review.query_one("#reveal-hint").render())
        await pilot.press("space")  # next card
        await until(pilot, lambda: not review.revealed)
        # rated Good: it comes straight back as a learning card, shown afresh (front only)
        assert review.session.stats.reviewed == 1
        assert review.card is not None and review.card.id == "ddp-equals-single"
        assert runner.calls and runner.calls[0]["name"] == "ddp-baseline"


@run_async
async def test_a_card_naming_an_unknown_lab_gives_a_notice(home: Path, tmp_path: Path) -> None:
    import yaml

    from drill.decks.models import Card
    from tests.support.lab_fakes import CARD_YAML
    from tests.support.pilot import Notices

    data = yaml.safe_load(CARD_YAML)
    data["lab"]["run"] = "no-such-lab"
    card = Card.model_validate(data)
    app = drill_app_with_lab_card(tmp_path)
    notices = Notices()
    async with app.run_test(size=(100, 50), message_hook=notices) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert not open_lab_panel(app, app.services, card, "d")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, LabPanelScreen)
        assert any("unknown lab 'no-such-lab'" in n for n in notices.messages("error"))
