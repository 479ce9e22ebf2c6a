"""A numbers card in review: the front shows drawn numbers, the back the computed answer."""

from __future__ import annotations

import re

from rich.markdown import Markdown
from textual.pilot import Pilot
from textual.widgets import Input, Static

from drill.decks.numbers import format_number
from drill.tui.screens.numbers_answer import NumberAnswerScreen
from drill.tui.screens.review import ReviewScreen
from tests.support.pilot import run_async, until

SIZE = (100, 32)
DECK = """\
deck: nums
title: Numbers
cards:
  - id: ring
    level: easy
    front: |
      All-reduce {size} MB over {n} GPUs: MB sent per GPU?
    back: |
      2 (n - 1) / n of it.
    rubric: [two passes]
    numbers:
      vars:
        size: {min: 10, max: 100, step: 10, unit: MB}
        n: {choices: [2, 4, 8], unit: GPUs}
      answer: 2 * (n - 1) / n * size
      unit: MB
"""


def markdown_of(pilot: Pilot, selector: str) -> str:
    rendered = pilot.app.screen.query_one(selector, Static).content
    assert isinstance(rendered, Markdown)
    return rendered.markup


async def check_the_card(pilot: Pilot) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen) and screen.card is not None
    front = markdown_of(pilot, "#front")
    found = re.match(r"All-reduce (\d+) MB over (\d) GPUs", front)
    assert found is not None, front
    size, n = float(found.group(1)), float(found.group(2))
    await pilot.press("space")
    back = markdown_of(pilot, "#back")
    expected = 2 * (n - 1) / n * size
    assert f"**Answer: {format_number(expected)} MB**" in back  # three significant figures
    assert f"size = {size:g} MB, n = {n:g} GPUs" in back and "**Rubric**" in back


@run_async
async def test_a_numbers_card_shows_drawn_numbers_and_the_computed_answer(
    make_app, deck_dir
) -> None:
    (deck_dir / "nums.yaml").write_text(DECK)
    async with make_app(start_review="nums").run_test(size=SIZE) as pilot:  # cold: validated
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await check_the_card(pilot)
    async with make_app(start_review="nums").run_test(size=SIZE) as pilot:  # warm: the cache
        await pilot.pause()
        await check_the_card(pilot)


@run_async
async def test_a_typed_answer_is_graded_and_a_rating_suggested(make_app, deck_dir, query) -> None:
    (deck_dir / "nums.yaml").write_text(DECK)
    async with make_app(start_review="nums").run_test(size=SIZE) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ReviewScreen) and screen.numbers is not None
        answer = screen.numbers.answer
        await pilot.press("n")
        await until(pilot, lambda: isinstance(pilot.app.screen, NumberAnswerScreen))
        await pilot.press(*"abc", "enter")  # not a number: the box stays
        assert isinstance(pilot.app.screen, NumberAnswerScreen)
        pilot.app.screen.query_one(Input).value = format(answer * 1.15, ".6g")
        await pilot.press("enter")
        await until(pilot, lambda: screen.revealed)
        back = markdown_of(pilot, "#back")
        assert "15 % off, suggested rating **2 Hard** (yours to choose)" in back
        await pilot.press("3")  # the user decides
        assert query("SELECT card_id, rating FROM review_log") == [("ring", 3)]


@run_async
async def test_a_hostile_unit_is_shown_as_text_in_the_answer_box(make_app, deck_dir) -> None:
    (deck_dir / "nums.yaml").write_text(DECK.replace("      unit: MB\n", '      unit: "[/x]s"\n'))
    async with make_app(start_review="nums").run_test(size=SIZE) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ReviewScreen) and screen.numbers is not None
        await pilot.press("n")  # a unit read as markup raised MarkupError here and ended drill
        await until(pilot, lambda: isinstance(pilot.app.screen, NumberAnswerScreen))
        label = str(pilot.app.screen.query(Static).first().render())
        assert label == "Your answer ([/x]s)"
