"""An exercise solved from review rates several cards at once; each card that rating made a
leech gets its own notice naming it, not only the last card rated (issue 26)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from drill.tui.screens.review import ReviewScreen
from tests.support.clocks import TUI_START
from tests.support.pilot import Notices, run_async, text_of, until
from tests.support.review_logs import LogBuilder
from trainer_lab.exercises.catalogue import get_exercise

SIZE = (100, 32)

KATA = "deck: kata\ntitle: Kata deck\ncards:\n" + "".join(
    f"""\
  - id: k{n}
    level: medium
    exercise: first-nan
    front: Which module produced the first NaN ({n})?
    back: Hook every module's forward and stop at the first non-finite output.
"""
    for n in (1, 2, 3)
)


async def settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.lab
@run_async
async def test_each_card_made_a_leech_by_an_exercise_is_named(
    make_app, deck_dir: Path, home: Path, query
) -> None:
    (deck_dir / "kata.yaml").write_text(KATA)
    log = LogBuilder(home / "drill.sqlite3")
    # Review cards due; k1 and k3 one lapse short of the leech threshold (8), k2 far from it.
    for n, lapses in ((1, 7), (2, 0), (3, 7)):
        log.card(f"k{n}", "kata", due=TUI_START - timedelta(days=4 - n), lapses=lapses)
    log.write()
    app = make_app()
    notices = Notices()
    solution = get_exercise("first-nan").solution_path.read_text()
    async with app.run_test(size=SIZE, message_hook=notices) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")  # the kata deck, after alpha and beta
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.card is not None
        assert screen.card.id == "k1"
        await pilot.press("e")
        await until(pilot, lambda: type(app.screen).__name__ == "ExerciseScreen")
        exercise = app.screen
        exercise.service.store.solution_viewed("first-nan")  # as f4 records: a solve is Again
        exercise.query_one("#ex-editor").load_text(solution)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "Solved" in text_of(pilot, "#ex-verdict-text"), tries=3000)
        verdict = text_of(pilot, "#ex-verdict-text")
        assert all(f"k{n}: Again, due in 10 min" in verdict for n in (1, 2, 3))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await until(pilot, lambda: "Rated Again in the exercise" in text_of(pilot, "#reveal-hint"))
    leeches = [m for m in notices.messages("warning") if m.startswith("Leech")]
    assert sorted(leeches) == [
        "Leech: k1 lapsed 8 times, suspended",
        "Leech: k3 lapsed 8 times, suspended",
    ]
    assert query("SELECT card_id, rating FROM review_log ORDER BY id") == [
        ("k1", 1), ("k2", 1), ("k3", 1)
    ]  # fmt: skip
    assert query("SELECT card_id FROM card_state WHERE leech = 1 ORDER BY card_id") == [
        ("k1",), ("k3",)
    ]  # fmt: skip
