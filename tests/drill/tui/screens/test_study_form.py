"""The custom-study header names the chosen deck once (the review header adds each card's
deck after the title)."""

from __future__ import annotations

from textual.widgets import Input, Static

from drill.review.study import StudyFilter
from drill.tui.screens.review import ReviewScreen
from drill.tui.screens.study_form import header_title
from tests.support.pilot import run_async, until


def test_header_title_leaves_the_deck_to_the_header() -> None:
    chosen = StudyFilter(("logging",), "hard", "cheatsheet")
    assert header_title(chosen) == "Custom study · tag logging · hard"
    assert header_title(StudyFilter(deck_id="cheatsheet")) == "Custom study"


@run_async
async def test_custom_study_by_tag_and_deck_names_the_deck_once(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("c")
        await until(pilot, lambda: bool(app.screen.query("#study-tags")))
        app.screen.query_one("#study-level", Input).value = "easy"
        app.screen.query_one("#study-deck", Input).value = "beta"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        header = str(app.screen.query_one("#review-status", Static).render())
        assert header.endswith("Custom study · easy · beta")
        assert header.count("beta") == 1
