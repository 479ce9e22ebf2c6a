"""Views follow the schedule (issue 34): a rating anywhere refreshes the browser's rows and the
home screen's counts (CardsRated), and home reads again on its own when a "Next due" or a count
changes with time (one timer, armed for that moment), under a fixed clock the test moves."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from drill.tui.rated import announce_rated
from drill.tui.screens.home import PAST_THE_CHANGE_S, HomeScreen
from drill.tui.screens.lab_panel import LabPanelScreen
from storage.db import open_database
from tests.support.browser_host import NOW, host
from tests.support.lab_fakes import FakeRunner
from tests.support.pilot import run_async, until
from tests.support.review_logs import LogBuilder, write_browse_decks


def row_text(screen: Any, table_id: str, key: str) -> list[str]:
    return [str(cell) for cell in screen.query_one(table_id, DataTable).get_row(key)]


@run_async
async def test_a_lab_rating_over_the_browser_refreshes_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drill import services as services_module
    from drill.decks.loader import load_decks

    real_lab_run = services_module.lab_run
    runner = FakeRunner()
    runner.release.set()

    def fake_lab_run(services: Any, card: Any, deck_id: Any, **options: Any) -> Any:
        options.update(runner=runner, runs_root=tmp_path / "runs", now=lambda: NOW)
        return real_lab_run(services, card, deck_id, **options)

    monkeypatch.setattr(services_module, "lab_run", fake_lab_run)
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("resume-state", "infra", due=NOW - timedelta(hours=1), interval_days=6)
    db = open_database(log.write())
    try:
        app = host(decks, db, query="resume-state")
        async with app.run_test(size=(140, 40)) as pilot:
            browser = app.screen
            await until(pilot, lambda: [r.card_id for r in browser.shown] == ["resume-state"])
            before = row_text(browser, "#browse-table", "resume-state")
            assert "now" in before
            await pilot.press("enter", "l")
            await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
            panel = app.screen
            await pilot.press("ctrl+r")
            await until(pilot, lambda: panel.service.can_rate)
            await pilot.press("3")  # Good: the card is due, so it is rescheduled
            await until(pilot, lambda: app.screen is browser)
            await pilot.pause()
            after = row_text(browser, "#browse-table", "resume-state")
            state = db.review.card_state("resume-state")
            assert state is not None and state["due"] is not None
            assert after != before and "now" not in after  # the row shows the new schedule
    finally:
        db.close()


@run_async
async def test_home_refreshes_after_a_rating_and_when_the_next_card_falls_due(
    make_app: Any, clock: Any
) -> None:
    from drill.review.scheduler import rate_card
    from drill.tui.formatting import next_due_text_change

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert row_text(home, "#decks", "alpha")[1:] == ["0", "3", "-"]
        services = app.services
        assert services is not None
        card = services.decks.card("a1")
        assert card is not None
        # rated elsewhere (a lab, an exercise): the rating path announces it
        rated = rate_card(services.db, "a1", "alpha", 1, content_hash=card.content_hash(),
                          now=clock())  # fmt: skip
        announce_rated(app, ["a1"])
        await until(pilot, lambda: row_text(home, "#decks", "alpha")[2] == "2")
        due, label = rated.due, row_text(home, "#decks", "alpha")[3]
        assert due is not None and label.startswith("in ")
        # one timer, for the moment the label changes (not a poll)
        expected = next_due_text_change(due, clock())
        assert home.next_change_in == expected and expected is not None
        timer = home._change_timer
        assert timer is not None and timer._interval == pytest.approx(
            expected.total_seconds() + PAST_THE_CHANGE_S
        )
        seen = [label]
        for _ in range(30):  # the clock reaches each change; the timer's callback reads again
            assert home.next_change_in is not None
            clock.advance(seconds=home.next_change_in.total_seconds() + PAST_THE_CHANGE_S)
            home.on_next_change()
            await pilot.pause()
            seen.append(row_text(home, "#decks", "alpha")[3])
            if seen[-1] == "now":
                break
        assert seen[-1] == "now" and len(set(seen)) == len(seen)  # every read showed a change
        assert row_text(home, "#decks", "alpha")[1] == "1"  # the card counts as due now
        assert home._change_timer is not None  # re-armed (the next learner day)


@run_async
async def test_ratings_in_review_cost_home_no_read_until_it_shows_again(make_app: Any) -> None:
    """Home's read walks every card (seconds at 50,000): under the review screen, which hides
    it, ratings only mark it stale; back on home, one read shows them."""
    from drill.tui.screens.review import ReviewScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert row_text(home, "#decks", "alpha")[1:] == ["0", "3", "-"]
        reads = count_reads(home)
        await pilot.press("enter")  # the alpha deck's review
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        await until(pilot, lambda: review.card is not None)
        await pilot.press("space", "1")  # a new card rated Again: in learning now
        await until(pilot, lambda: home.stale)
        await pilot.press("space", "3")
        await pilot.pause()
        assert app.screen is review and reads == []  # nothing read under the review
        assert row_text(home, "#decks", "alpha")[2] == "3"  # the table is as it was
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home)
        await until(pilot, lambda: row_text(home, "#decks", "alpha")[2] == "1")
        assert reads and not home.stale  # (the fixed clock keeps "due in 1m" re-reading)


@run_async
async def test_a_rating_under_a_dialog_refreshes_home_behind_it(make_app: Any) -> None:
    """A dialog leaves home in sight: a rating announced while one is open reads at once."""
    from drill.tui.screens.browser_dialogs import ConfirmScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen)
        reads = count_reads(home)
        app.push_screen(ConfirmScreen("Go on?"))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert not home.hidden
        announce_rated(app, ["a1"])
        await until(pilot, lambda: len(reads) == 1)
        assert app.screen is not home and not home.stale


def count_reads(home: HomeScreen) -> list[int]:
    """Home's reads from now on, one entry each."""
    reads: list[int] = []
    real_read = home.refresh_counts

    def counted() -> None:
        reads.append(1)
        real_read()

    home.refresh_counts = counted  # type: ignore[method-assign]
    return reads


@run_async
async def test_ratings_in_a_row_cost_home_one_read_after_the_paint(make_app: Any) -> None:
    """Home reads every card's schedule: three ratings announced before it gets to read cost one
    read, done after the screen on top has painted, not inside each rating."""
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen)
        reads = count_reads(home)
        for _ in range(3):
            announce_rated(app, ["a1"])
        assert reads == []  # the ratings did not wait on home
        await until(pilot, lambda: len(reads) >= 1)
        await pilot.pause()
        await pilot.pause()
        assert len(reads) == 1
