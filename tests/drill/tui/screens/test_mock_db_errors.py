"""A mock round whose database is locked by another writer: saving gives one notice (not one
per tick), the round goes on in memory (the next phase is shown), and saves work again once
the lock is gone."""

from __future__ import annotations

import random
import sqlite3

import storage.db
from drill.mock.round import MockRun
from drill.tui.screens.mock_round import AnswerArea, MockApp, MockRoundScreen
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, tiny_round
from tests.support.pilot import Notices, run_async


@run_async
async def test_locked_database_during_a_round(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 50)
    store = open_store(tmp_path / "drill.sqlite3")
    clock = FakeClock()
    run = MockRun.start_new(store, tiny_round(), CARDS, minutes=1, rng=random.Random(1), now=clock)
    app = MockApp(run, tick_s=3600, autosave_s=3600)
    notices = Notices()
    try:
        async with app.run_test(size=(100, 40), message_hook=notices) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, MockRoundScreen)
            await pilot.press("o", "k")
            other = sqlite3.connect(tmp_path / "drill.sqlite3", isolation_level=None)
            other.execute("BEGIN IMMEDIATE")  # another copy of drill is writing
            try:
                await pilot.press("ctrl+s")
                screen.autosave_now()
                await pilot.press("f3")  # the phase change saves too, and fails
                await pilot.pause()
            finally:
                other.execute("ROLLBACK")
                other.close()
            errors = notices.messages("error")
            assert len(errors) == 1 and errors[0].startswith("Not saved: ")
            assert "database is locked" in errors[0]
            assert app.is_running and app.screen is screen
            assert run.clock.phase == 1 and len(list(screen.query(AnswerArea))) >= 1
            assert str(screen.query_one("#phase-name").render()).startswith("Phase 2/2")
            await pilot.press("ctrl+s")  # the lock is gone: saved
            await pilot.pause()
            assert str(screen.query_one("#save-state").render()) == "Answers saved."
            assert store.load(run.round_id).prompts[0].answer == "ok"
    finally:
        store.db.close()
