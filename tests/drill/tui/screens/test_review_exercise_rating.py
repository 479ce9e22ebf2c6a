"""Solving an exercise opened from a review card rates the cards that link it, each once, the
card on screen included (issue 26: the callback rated whatever card the session showed by then),
the others by the rule for ratings from outside review, and the exercise screen says per card
what changed (issue 34)."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from drill.tui.screens.review import ReviewScreen
from tests.support.pilot import run_async, text_of, until
from trainer_lab.exercises.catalogue import get_exercise

SIZE = (100, 32)

KATA = """\
deck: kata
title: Kata deck
cards:
"""
for _n in (1, 2, 3):
    KATA += f"""\
  - id: k{_n}
    level: medium
    exercise: first-nan
    front: Which module produced the first NaN ({_n})?
    back: Hook every module's forward and stop at the first non-finite output.
"""


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_kata(pilot: Pilot) -> ReviewScreen:
    """Home -> the kata deck (listed after alpha and beta) -> its review."""
    await settle(pilot)
    await pilot.press("down", "down", "enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen) and screen.card is not None
    assert screen.card.id == "k1"
    return screen


@pytest.mark.lab
@run_async
async def test_solving_from_the_second_card_rates_each_linked_card_once(
    make_app, deck_dir, query
) -> None:
    (deck_dir / "kata.yaml").write_text(KATA)
    app = make_app()
    solution = get_exercise("first-nan").solution_path.read_text()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kata(pilot)
        await pilot.press("space", "3")  # k1 rated Good by hand: k2 is on screen
        await until(pilot, lambda: screen.card is not None and screen.card.id == "k2")
        await pilot.press("e")
        await until(pilot, lambda: type(app.screen).__name__ == "ExerciseScreen")
        app.screen.query_one("#ex-editor").load_text(solution)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "Solved" in text_of(pilot, "#ex-verdict-text"), tries=3000)
        verdict = text_of(pilot, "#ex-verdict-text")
        # issue 34: k1 (in learning, not due) is logged only, k2 (on screen) rated, and k3,
        # never seen, is not rated from outside review
        assert "k1: not due, logged only" in verdict
        assert "k2: Good, due in 10 min" in verdict
        assert "k3: new, not rated" in verdict
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await until(pilot, lambda: "Rated Good in the exercise" in text_of(pilot, "#reveal-hint"))
        assert screen.card.id == "k2"
        await pilot.press("space")  # on: k3 was not rated, so it is still a new card here
        await until(pilot, lambda: screen.rated_in_lab is None)
        assert screen.card.id == "k3" and screen.kind == "new"
    rows = query("SELECT card_id, rating FROM review_log ORDER BY id")
    assert rows == [("k1", 3), ("k1", 3), ("k2", 3)]
