"""Pilot tests: `u` undoes rate / bury / suspend as a stack, the header names the card's kind,
`m` shows a card's `more:`, and custom study from home `c`."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from drill.tui.screens.review import ReviewScreen
from tests.support.pilot import run_async, until

SIZE = (100, 32)

MORE_DECK = """\
deck: gamma
title: Gamma deck
cards:
  - id: g1
    level: hard
    tags: [nccl]
    front: Why does NCCL hang?
    back: A rank never joined the collective.
    more: Collectives block until every rank arrives; a skipped call leaves the others waiting.
"""


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def log_rows(query) -> list[tuple[str, int]]:
    return query("SELECT card_id, rating FROM review_log ORDER BY id")


def status(screen: ReviewScreen) -> str:
    return str(screen.query_one("#review-status", Static).render())


@run_async
async def test_u_undoes_rate_bury_suspend_rate_in_reverse(make_app, query) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await pilot.press("space", "4")  # a1 Easy
        await pilot.press("b")  # a2 buried
        await pilot.press("s")  # a3 suspended
        await pilot.press("space", "4")  # b1 Easy
        assert screen.card is not None and screen.card.id == "b2"
        assert log_rows(query) == [("a1", 4), ("b1", 4)]
        flags = "SELECT card_id, suspended, buried_until IS NOT NULL FROM card_state ORDER BY 1"
        assert query(flags) == [("a1", 0, 0), ("a2", 0, 1), ("a3", 1, 0), ("b1", 0, 0)]

        await pilot.press("u")
        assert screen.card.id == "b1" and log_rows(query) == [("a1", 4)]
        await pilot.press("u")  # the suspend, not an earlier rating
        assert screen.card.id == "a3" and log_rows(query) == [("a1", 4)]
        assert query(flags) == [("a1", 0, 0), ("a2", 0, 1)]
        await pilot.press("u")
        assert screen.card.id == "a2" and query(flags) == [("a1", 0, 0)]
        await pilot.press("u")
        assert screen.card.id == "a1" and log_rows(query) == [] and query(flags) == []
        await pilot.press("u")  # nothing left: ignored
        assert screen.card.id == "a1" and "5 left" in status(screen)


@run_async
async def test_header_says_relearning_for_a_failed_review_card(make_app, clock) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert status(screen).startswith("5 left · new ·")
        await pilot.press("space", "4")  # a1 -> review, days ahead
        await pilot.press("escape")
        clock.advance(days=400)
        await pilot.pause()
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.card.id == "a1"
        assert " · review · " in status(screen)
        await pilot.press("space", "1")  # lapse: comes back in this session as relearning
        while screen.card is not None and screen.card.id != "a1":
            await pilot.press("b")
        assert screen.card is not None and " · relearning · " in status(screen)


@run_async
async def test_m_shows_more_only_for_a_card_that_has_it(make_app, deck_dir: Path) -> None:
    (deck_dir / "gamma.yaml").write_text(MORE_DECK)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.card.id == "a1"
        assert screen.check_action("more", ()) is False
        await pilot.press("m")
        assert not screen.revealed and not screen.query_one("#more").display
        for _ in range(5):
            await pilot.press("b")
        assert screen.card is not None and screen.card.id == "g1"
        assert screen.check_action("more", ()) is True
        await pilot.press("m")  # reveals the back too
        assert screen.revealed and screen.query_one("#more").display
        assert "skipped call" in screen.query_one("#more", Static).content.markup


@run_async
async def test_c_on_home_starts_custom_study_beyond_the_limits(make_app, query) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await until(pilot, lambda: app.screen.query("#study-tags"))
        app.screen.query_one("#study-level", Input).value = "bogus"
        await pilot.press("enter")
        assert app.screen.query("#study-tags")  # refused: the form stays
        app.screen.query_one("#study-level", Input).value = "easy"
        app.screen.query_one("#study-deck", Input).value = "beta"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert screen.card is not None and screen.card.id == "b1"
        assert "Custom study · easy · beta" in status(screen)
        await pilot.press("space", "4", "space", "4")
        assert log_rows(query) == [("b1", 4), ("b2", 4)]


@run_async
async def test_drill_study_options_open_the_app_in_custom_study(deck_dir: Path, clock) -> None:
    import argparse

    from drill.cli.study import study_options
    from drill.tui.app import DrillApp

    args = argparse.Namespace(decks=[str(deck_dir)], tag=[], level="medium", deck=None, limit=5)
    options = study_options(args)
    options.include_bundled, options.now = False, clock
    app = DrillApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: getattr(app.screen, "card", None) is not None)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.card is not None
        assert screen.card.id == "a2" and screen.session is not None
        assert screen.session.remaining == 1 and "Custom study · medium" in status(screen)


def test_drill_study_refuses_a_bad_limit_in_one_line(capsys) -> None:
    from drill.cli.main import main

    assert main(["study", "--limit", "0"]) == 2
    assert capsys.readouterr().err == "drill: error: --limit must be between 1 and 1000, got 0\n"
