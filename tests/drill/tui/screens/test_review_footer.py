"""The review footer lists `e` on every card that links an exercise, also when the card comes
right after two plain ones (`space space`: nothing else in the footer changes then)."""

from __future__ import annotations

from textual.pilot import Pilot

from drill.tui.screens.review import ReviewScreen
from tests.support.pilot import run_async, screen_text, until

DECK = """\
deck: aaa
title: Aardvark (listed first)
cards:
  - id: p1
    level: easy
    front: Plain one?
    back: Yes.
  - id: p2
    level: easy
    front: Plain two?
    back: Yes.
  - id: x3
    exercise: first-nan
    level: easy
    front: Which module produced the first NaN?
    back: Hook every module's forward.
  - id: p4
    level: easy
    front: Plain four?
    back: Yes.
"""


def footer(pilot: Pilot) -> str:
    return screen_text(pilot.app).splitlines()[-1]


@run_async
async def test_footer_shows_e_exactly_on_the_card_with_an_exercise(make_app, deck_dir) -> None:
    (deck_dir / "aaa.yaml").write_text(DECK)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("enter")  # the first deck by title
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: screen.session is not None and screen.card is not None)
        seen = {}
        for expected in ("p1", "p2", "x3", "p4"):
            await until(pilot, lambda e=expected: screen.card is not None and screen.card.id == e)
            await pilot.pause()
            seen[expected] = "Exercise" in footer(pilot)
            await pilot.press("space", "space")
        assert seen == {"p1": False, "p2": False, "x3": True, "p4": False}
