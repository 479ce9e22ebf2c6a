"""A folder of hostile deck files beside a good deck: the app starts, loads the good deck,
names the bad files in a notice, and `q` quits, also while the decks are still loading."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.widgets import DataTable

from drill.services import Services
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
        # a claim problem does not skip a deck; nan-param's and yes-back's one card is left out
        assert home.deck_ids == ["good", "nanclaim", "nanparam", "yesdeck"]
        assert home.query_one("#decks", DataTable).row_count == 4
        await until(pilot, lambda: bool(notices.messages("warning")))
        (notice,) = notices.messages("warning")
        skipped = [name for name in expected if name != "nan-claim.yaml"]
        assert all(name in notice for name in skipped), notice
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@run_async
async def test_q_quits_while_a_hostile_folder_is_still_loading(tmp_path: Path) -> None:
    folder = tmp_path / "decks"
    hostile_folder(folder)
    app = DrillApp(AppOptions(deck_dirs=[folder], include_bundled=False, headless=True))
    release, finished = threading.Event(), threading.Event()
    load = app.startup.load

    def load_after_release() -> Services:  # the load is still running when q arrives
        release.wait()
        try:
            return load()
        finally:
            finished.set()

    app.startup.load = load_after_release  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            home = app.screen
            assert isinstance(home, HomeScreen) and not home.loaded
            await pilot.press("q")
            release.set()
            await pilot.pause()
    finally:
        release.set()
    assert app.return_code == 0 and app.crash is None
    # the loader thread ends too (an alias bomb once kept it, and so the process, alive forever);
    # the bound only keeps a regression from hanging the suite
    assert finished.wait(timeout=120)
