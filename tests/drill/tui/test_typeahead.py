"""Keys sent in a burst (fast typing, a paste) are never lost (issue 26): not the ones typed
right after the key that opens the browser or the custom-study form, not a tab between two
fields. A burst is posted the way the terminal driver posts it: every key queued on the app at
once, none waiting for the one before."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.widgets import Input

from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.review import ReviewScreen
from drill.tui.screens.study_form import StudyFormScreen
from tests.support.pilot import run_async, until


def burst(app: App, *keys: str) -> None:
    """Queue every key on the app at once, as a terminal delivers a fast burst."""
    for key in keys:
        if len(key) == 1:
            app.post_message(events.Key(_character_to_key(key), key))
        else:
            app.post_message(events.Key(key, None))


async def home(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def value(app: App, selector: str) -> str:
    return app.screen.query_one(selector, Input).value


@run_async
async def test_typing_right_after_b_goes_into_the_browser_search(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    query = "tag:fsdp -is:new level:hard"
    async with app.run_test(size=(120, 40)) as pilot:
        await home(pilot)
        burst(app, "B", *query)
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await until(pilot, lambda: value(app, "#browse-query") == query)
        burst(app, *" abcdefghijklmnopqrstuvwxyz0123456789")  # once open, a long burst
        await until(pilot, lambda: value(app, "#browse-query").endswith("xyz0123456789"))
        assert value(app, "#browse-query") == query + " abcdefghijklmnopqrstuvwxyz0123456789"


@run_async
async def test_a_paste_while_the_browser_opens_lands_in_the_search(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await home(pilot)
        burst(app, "B")
        app.post_message(events.Paste("deck:alpha -tag:x"))
        burst(app, *" ok")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await until(pilot, lambda: value(app, "#browse-query") == "deck:alpha -tag:x ok")


@run_async
async def test_the_study_form_gets_every_key_and_the_tab_between_fields(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await home(pilot)
        burst(app, "c", *"checkpoint nccl", "tab", *"hard", "tab", *"alpha", "tab", *"30")
        await until(pilot, lambda: isinstance(app.screen, StudyFormScreen))
        await until(pilot, lambda: value(app, "#study-count") == "30")
        assert value(app, "#study-tags") == "checkpoint nccl"
        assert value(app, "#study-level") == "hard"
        assert value(app, "#study-deck") == "alpha"


@run_async
async def test_pilot_typing_and_a_paste_into_the_open_form(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await home(pilot)
        await pilot.press("c", *"fsdp ddp checkpoint")
        await until(pilot, lambda: value(app, "#study-tags") == "fsdp ddp checkpoint")
        await pilot.press("tab")
        app.post_message(events.Paste("medium"))
        await until(pilot, lambda: value(app, "#study-level") == "medium")


@run_async
async def test_a_burst_of_ratings_rates_each_card_in_turn(make_app, query) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await home(pilot)
        burst(app, "enter")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        await until(pilot, lambda: screen.session is not None)
        burst(app, "space", "3", "space", "2", "space", "4")
        await until(pilot, lambda: len(query("SELECT card_id FROM review_log")) == 3)
    assert query("SELECT card_id, rating FROM review_log ORDER BY id") == [
        ("a1", 3),
        ("a2", 2),
        ("a3", 4),
    ]
