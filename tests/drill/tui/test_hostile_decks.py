"""A folder of hostile deck files beside a good deck: the app starts, loads the good deck,
names the bad files in a notice, and `q` quits."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from drill.tui.app import AppOptions, DrillApp
from drill.tui.screens.home import HomeScreen
from tests.support.hostile_decks import hostile_folder
from tests.support.pilot import Notices, run_async, until


@run_async
async def test_hostile_decks_beside_a_good_one(tmp_path: Path) -> None:
    folder = tmp_path / "decks"
    expected = hostile_folder(folder)
    notices = Notices()
    app = DrillApp(AppOptions(deck_dirs=[folder], include_bundled=False, headless=True))
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await until(pilot, lambda: home.loaded)
        assert home.deck_ids == ["good", "nanclaim"]  # a claim problem does not skip a deck
        assert home.query_one("#decks", DataTable).row_count == 2
        await until(pilot, lambda: bool(notices.messages("warning")))
        (notice,) = notices.messages("warning")
        skipped = [name for name in expected if name != "nan-claim.yaml"]
        assert all(name in notice for name in skipped), notice
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
