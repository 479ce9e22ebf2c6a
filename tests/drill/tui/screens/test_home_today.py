"""The home screen's today queue (issue 33): the items with minutes and progress, `enter` walking
them in order (reviews, new cards, the lab, the exercise, the round), the plan line, the plan
form (`P`) and the readiness key (`R`); and the panel following the schedule: after a rating,
an undo, a bury or a suspend in review, and when a card falls due (the home's one timer, moved
by the test's clock, never by sleeping)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static

from drill.tui.screens.home import PAST_THE_CHANGE_S, HomeScreen
from drill.tui.screens.plan_form import PlanFormScreen
from tests.support.pilot import run_async, until

GAMMA = """\
deck: gamma
title: Gamma deck
cards:
  - id: g1
    level: easy
    front: What does a weights-only resume do to the loss?
    back: It jumps.
    lab: {run: resume}
    predict:
      ask: After a weights-only resume the loss is ...
      choices:
        - {text: about the same, when: "loss_jump_ratio < 1.2"}
        - {text: clearly higher, when: "loss_jump_ratio >= 2"}
  - id: g2
    level: easy
    front: Where does the first NaN come from?
    back: Find the first non-finite op.
    exercise: first-nan
"""


@pytest.fixture(autouse=True)
def gamma_deck(deck_dir: Path) -> None:
    (deck_dir / "gamma.yaml").write_text(GAMMA)


def today_rows(home: HomeScreen) -> list[list[str]]:
    table = home.query_one("#today", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def today_row(home: HomeScreen, kind: str) -> list[str]:
    kinds = [item.kind for item in home.today]
    return today_rows(home)[kinds.index(kind)]


async def loaded_home(app: Any, pilot: Any) -> HomeScreen:
    await pilot.app.workers.wait_for_complete()
    await until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.services is not None)
    home = app.screen
    await until(pilot, lambda: [i.kind for i in home.today][2:] == ["lab", "exercise"])
    return home


@run_async
async def test_the_today_panel_lists_each_item_with_minutes_and_progress(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home = await loaded_home(app, pilot)
        assert today_rows(home) == [
            ["Reviews · nothing due now", "-", "0/0 ✓"],
            ["New cards", "7", "0/7"],  # 7 new cards, 3 answers of 20 s each on day one
            ["Predict lab resume · card g1", "5", "0/1"],
            ["Exercise first-nan", "30", "0/1"],
        ]
        assert not home.query_one("#home-plan", Static).display  # no plan: no plan line
        assert home.query_one("#today", DataTable).cursor_row == 1  # the next item to do


@run_async
async def test_enter_on_the_today_panel_walks_it_in_order(make_app, home: Path, clock) -> None:
    from drill.runs.recorder import finish_run, start_run
    from drill.settings import Settings
    from drill.tui.screens.exercise import ExerciseScreen
    from drill.tui.screens.lab_panel import LabPanelScreen
    from drill.tui.screens.review import ReviewScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)
        await pilot.press("tab")  # from the deck table to the today queue
        assert app.focused is home_screen.query_one("#today", DataTable)
        await pilot.press("enter")  # reviews are done: the new cards, in one review
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.screen.deck_id is None
        services = app.services
        assert services is not None
        services.settings = Settings(new_cards_per_day=0)  # no new card left today
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home_screen)
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "0/0 ✓")

        await pilot.press("enter")  # the lab to predict
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        assert app.screen.service.card.id == "g1"
        run = start_run(services.db, "lab", "resume", {}, 2, str(home / "r"), clock(),
                        card_id="g1", predicted="clearly higher", certainty="high")  # fmt: skip
        finish_run(services.db, run, "ok", 1.0, {}, at=clock(), prediction_right=True)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home_screen)
        await until(pilot, lambda: today_row(home_screen, "lab")[2] == "1/1 ✓")

        await pilot.press("enter")  # the exercise
        await until(pilot, lambda: isinstance(app.screen, ExerciseScreen))
        assert app.screen.info.name == "first-nan"
        services.db.exercises.checked("first-nan", "ok", clock())
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home_screen)
        await until(pilot, lambda: today_row(home_screen, "exercise")[2] == "1/1 ✓")

        await pilot.press("enter")  # everything done
        await pilot.pause()
        assert app.screen is home_screen


@run_async
async def test_the_mock_round_item_opens_the_round_picker_on_a_planned_day(make_app, clock) -> None:
    from drill.times import learner_date
    from drill.tui.screens.mock_picker import MockPickerScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)
        services = app.services
        day = learner_date(clock(), services.settings.day_start_hour) + timedelta(days=7)
        services.set_plan(day, "training-infra", 45)
        home_screen.refresh_counts()
        await until(pilot, lambda: "mock" in [i.kind for i in home_screen.today])
        line = str(home_screen.query_one("#home-plan", Static).render())
        assert line == "Interview in 7 days · training-infra · 45 min/day"
        assert today_row(home_screen, "mock")[1:] == ["55", "0/1"]
        table = home_screen.query_one("#today", DataTable)
        table.focus()
        table.move_cursor(row=len(home_screen.today) - 1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MockPickerScreen))


@run_async
async def test_p_records_a_valid_plan_and_home_shows_it(make_app, query, clock) -> None:
    from drill.times import learner_date

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, PlanFormScreen))
        day = learner_date(clock()) + timedelta(days=10)
        await pilot.press(*day.isoformat(), "tab", "down")  # the role list opens
        await pilot.pause()
        await pilot.press("down", "enter")  # the role after the first: chosen, not saved
        await pilot.pause()
        assert app.screen is not home_screen
        await pilot.press("tab", "enter")  # enter in the minutes field saves (45 by default)
        await until(pilot, lambda: app.screen is home_screen)
        rows = query("SELECT interview_day, role, minutes_per_day FROM interview_plan")
        assert rows == [(day.isoformat(), "research-engineer", 45)]
        await until(pilot, lambda: home_screen.query_one("#home-plan", Static).display)
        line = str(home_screen.query_one("#home-plan", Static).render())
        assert line == "Interview in 10 days · research-engineer · 45 min/day"


@pytest.mark.parametrize(
    ("typed", "minutes", "said"),
    [
        ("2020-01-01", "45", "is in the past"),
        ("tomorrow", "45", "is not a date (YYYY-MM-DD)"),
        (None, "2", "outside 5..600"),
        (None, "lots", "is not a whole number"),
    ],
)
@run_async
async def test_p_refuses_a_bad_plan_in_one_line_and_writes_nothing(
    make_app, query, clock, typed: str | None, minutes: str, said: str
) -> None:
    from drill.times import learner_date

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await loaded_home(app, pilot)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, PlanFormScreen))
        form = app.screen
        day = typed or (learner_date(clock()) + timedelta(days=10)).isoformat()
        form.query_one("#plan-date", Input).value = day
        form.query_one("#plan-minutes", Input).value = minutes
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form  # still open, nothing recorded
        error = form.query_one("#plan-error", Static)
        text = str(error.render())
        assert error.display and said in text and "\n" not in text
        assert "Traceback" not in text
        assert query("SELECT COUNT(*) FROM interview_plan") == [(0,)]


@run_async
async def test_r_opens_the_readiness_screen(make_app) -> None:
    readiness = pytest.importorskip("drill.tui.screens.readiness")
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)
        await pilot.press("R")
        await until(pilot, lambda: app.screen is not home_screen)
        assert type(app.screen).__module__ == readiness.__name__


@run_async
async def test_undo_bury_and_suspend_in_review_show_on_home_when_it_shows_again(make_app) -> None:
    """Under the review (which hides home) each change only marks home stale; back on home,
    the today panel shows it."""
    from drill.tui.screens.review import ReviewScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)

        async def in_review(*keys: str) -> None:
            await pilot.press("enter")  # the alpha deck's review
            await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
            review = app.screen
            await until(pilot, lambda: review.card is not None)
            await pilot.press(*keys)
            await until(pilot, lambda: home_screen.stale)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is home_screen and not home_screen.stale)

        await in_review("space", "1")  # a new card rated Again: introduced today
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "1/7")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await until(pilot, lambda: app.screen.card is not None)
        await pilot.press("space", "1", "u")  # rated, then undone: not introduced after all
        await until(pilot, lambda: home_screen.stale)
        await pilot.press("escape")
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "1/7")  # the first stays
        await in_review("b")  # buried until tomorrow: one new card fewer today
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "1/6")
        await in_review("s")  # suspended
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "1/5")


@run_async
async def test_the_today_panel_follows_a_card_falling_due(make_app, clock) -> None:
    from drill.review.scheduler import rate_card
    from drill.tui.rated import announce_rated

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        home_screen = await loaded_home(app, pilot)
        services = app.services
        card = services.decks.card("a1")
        rate_card(services.db, "a1", "alpha", 1, content_hash=card.content_hash(), now=clock())
        announce_rated(app, ["a1"])
        await until(pilot, lambda: today_row(home_screen, "new")[2] == "1/7")
        assert today_row(home_screen, "reviews")[2] == "0/0 ✓"  # in learning, due in minutes
        for _ in range(30):  # each change the timer was armed for, until a1 is due
            assert home_screen.next_change_in is not None
            clock.advance(seconds=home_screen.next_change_in.total_seconds() + PAST_THE_CHANGE_S)
            home_screen.on_next_change()
            await pilot.pause()
            if home_screen.today[0].total:
                break
        assert today_rows(home_screen)[0] == ["Reviews due", "1", "0/1"]
