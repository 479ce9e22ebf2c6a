"""Pilot tests of the review loop; each asserts what SQLite holds, not only the screen."""

from __future__ import annotations

import sqlite3

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

import storage.db
from drill.tui.screens.home import HomeScreen
from drill.tui.screens.review import ReviewScreen
from drill.tui.screens.summary import SummaryScreen
from tests.support.pilot import run_async, text_of, until
from trainer_lab.exercises.catalogue import get_exercise

SIZE = (100, 32)


async def settle(pilot: Pilot) -> None:
    """Let the background load finish and its messages be handled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def review_screen(pilot: Pilot) -> ReviewScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen), type(screen).__name__
    return screen


def log_rows(query) -> list[tuple[str, int]]:
    return query("SELECT card_id, rating FROM review_log ORDER BY id")


def home_rows(pilot: Pilot) -> list[list[str]]:
    table = pilot.app.screen.query_one("#decks", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@run_async
async def test_home_lists_decks_with_counts(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert home_rows(pilot) == [["Alpha deck", "0", "3", "-"], ["Beta deck", "0", "2", "-"]]
        totals = str(app.screen.query_one("#home-totals", Static).render())
        assert "0 due, 5 new" in totals


@run_async
async def test_rating_needs_reveal_and_each_key_commits(make_app, query) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = review_screen(pilot)
        assert screen.card is not None and screen.card.id == "a1"
        assert not screen.query_one("#back", Static).display

        await pilot.press("3")  # unrevealed: ignored
        await pilot.pause()
        assert query("SELECT count(*) FROM review_log") == [(0,)]
        assert screen.card.id == "a1"

        await pilot.press("space")
        assert screen.revealed and screen.query_one("#back", Static).display
        labels = [str(screen.query_one(f"#rate-{r}", Static).render()) for r in (1, 2, 3, 4)]
        assert labels[0].startswith("1 Again · ") and labels[2].startswith("3 Good · ")

        # Easy, Hard, Again, Good on four different cards; each is in the DB right away.
        expected: list[tuple[str, int]] = []
        for key in ("4", "2", "1", "3"):
            if not screen.revealed:
                await pilot.press("space")
            shown = screen.card.id
            await pilot.press(key)
            expected.append((shown, int(key)))
            assert log_rows(query) == expected
            state = query("SELECT state, due FROM card_state WHERE card_id = ?", shown)
            assert len(state) == 1 and state[0][0] is not None
            assert screen.card is None or screen.card.id != shown
            assert not screen.revealed
        assert [card for card, _ in expected] == ["a1", "a2", "a3", "b1"]


@run_async
async def test_space_on_revealed_card_is_good_and_keys_fire_once(make_app, query) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the DataTable's enter and the screen's must not both fire
        await settle(pilot)
        assert [type(s).__name__ for s in app.screen_stack[1:]] == ["HomeScreen", "ReviewScreen"]
        await pilot.press("space", "space")  # reveal, then Good
        assert log_rows(query) == [("a1", 3)]
        await pilot.press("space", "3", "3")  # second 3 hits an unrevealed card: ignored
        assert log_rows(query) == [("a1", 3), ("a2", 3)]


@run_async
async def test_undo_restores_state_and_removes_the_log_row(make_app, query, clock) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = review_screen(pilot)
        await pilot.press("space", "4")  # a1 Easy: new card, no prior state
        clock.advance(minutes=1)
        await pilot.press("space", "2")  # a2 Hard
        before_a2 = query("SELECT * FROM card_state WHERE card_id = 'a2'")
        assert log_rows(query) == [("a1", 4), ("a2", 2)]
        clock.advance(minutes=1)
        await pilot.press("space", "1")  # a3 Again

        await pilot.press("u")
        assert log_rows(query) == [("a1", 4), ("a2", 2)]
        assert query("SELECT count(*) FROM card_state WHERE card_id = 'a3'") == [(0,)]
        assert query("SELECT * FROM card_state WHERE card_id = 'a2'") == before_a2
        assert screen.card is not None and screen.card.id == "a3" and not screen.revealed

        await pilot.press("u")
        assert log_rows(query) == [("a1", 4)]
        assert query("SELECT count(*) FROM card_state WHERE card_id = 'a2'") == [(0,)]
        assert screen.card.id == "a2"
        await pilot.press("u", "u")  # a1 undone, then nothing left to undo
        assert log_rows(query) == []
        assert screen.card.id == "a1"


@run_async
async def test_bury_and_suspend_are_stored_and_skip_the_card(make_app, query, clock) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = review_screen(pilot)
        await pilot.press("b")  # a1 buried (works on the front too)
        rows = query("SELECT buried_until, suspended, state FROM card_state WHERE card_id='a1'")
        assert len(rows) == 1 and rows[0][0] is not None and not rows[0][1] and rows[0][2] is None
        assert rows[0][0] > clock.now.strftime("%Y-%m-%d %H:%M:%S")
        assert screen.card.id == "a2"

        await pilot.press("space", "s")  # a2 suspended while revealed
        assert query("SELECT suspended FROM card_state WHERE card_id = 'a2'") == [(1,)]
        assert screen.card.id == "a3"
        assert query("SELECT count(*) FROM review_log") == [(0,)]

        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        # a1 (buried) and a2 (suspended) no longer count as new today
        assert home_rows(pilot)[0] == ["Alpha deck", "0", "1", "-"]


@run_async
async def test_summary_and_home_counts_after_a_session(make_app, query, clock) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")  # beta deck
        await settle(pilot)
        screen = review_screen(pilot)
        assert screen.card.id == "b1"
        clock.advance(seconds=30)
        await pilot.press("space", "1")  # b1 Again: due in a minute, comes back this session
        clock.advance(seconds=30)
        await pilot.press("space", "4")  # b2 Easy
        assert screen.card is not None and screen.card.id == "b1"
        clock.advance(seconds=60)
        await pilot.press("space", "4")  # b1 Easy: session over
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        body = str(app.screen.query_one("#summary-body", Static).render())
        assert body.splitlines() == ["Reviewed: 3", "Again:    1", "Time:     2m 00s"]
        assert log_rows(query) == [("b1", 1), ("b2", 4), ("b1", 4)]

        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        rows = home_rows(pilot)
        assert rows[0] == ["Alpha deck", "0", "3", "-"]
        assert rows[1][:3] == ["Beta deck", "0", "0"] and rows[1][3].startswith("in ")

        clock.advance(days=60)  # both beta cards are due by then
        app.screen.refresh_counts()
        assert home_rows(pilot)[1] == ["Beta deck", "2", "0", "now"]


@run_async
async def test_start_review_paints_first_card_before_the_session_loads(make_app, query) -> None:
    # A first run builds the deck cache and the database; the second starts warm, painting the
    # first card from the light read path while the repository loads in a worker.
    async with make_app().run_test(size=SIZE) as pilot:
        await settle(pilot)
    painted: list[str] = []
    app = make_app(start_review="all", on_card_painted=painted.append)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert painted[:1] == ["a1"]
        screen = review_screen(pilot)
        await pilot.press("space", "3")  # waits for the session if needed, then commits
        assert log_rows(query) == [("a1", 3)]
        await settle(pilot)
        assert screen.card.id == "a2" and painted[-1] == "a2"
        assert screen.session is not None and screen.session.stats.reviewed == 1


@run_async
async def test_cold_start_straight_into_review(make_app, query) -> None:
    # No deck cache and no database yet: the first card appears once the worker has loaded.
    painted: list[str] = []
    app = make_app(start_review="all", on_card_painted=painted.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = review_screen(pilot)
        assert painted == ["a1"] and screen.card is not None and screen.card.id == "a1"
        await pilot.press("space", "4")
        assert log_rows(query) == [("a1", 4)]
        assert painted == ["a1", "a2"]


@run_async
async def test_edited_card_shows_a_marker(make_app, deck_dir, clock) -> None:
    async with make_app().run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        await pilot.press("space", "4")  # b1 reviewed
    path = deck_dir / "beta.yaml"
    path.write_text(path.read_text().replace("What is MFU?", "What is MFU, exactly?"))
    clock.advance(days=400)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = review_screen(pilot)
        assert screen.card.id == "b1"  # due first
        marker = screen.query_one("#edited-marker", Static)
        assert marker.display and "edited since" in str(marker.render())
        await pilot.press("space", "3")
        assert screen.card.id == "b2"
        assert not screen.query_one("#edited-marker", Static).display


@run_async
async def test_invalid_deck_is_named_in_a_notice(make_app, deck_dir) -> None:
    (deck_dir / "broken.yaml").write_text("deck: broken\ncards:\n  - id: x\n")  # no title
    app = make_app()
    notices: list[str] = []
    original = app.notify

    def record(message: str, **kwargs) -> None:
        notices.append(message)
        original(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [n for n in notices if "broken.yaml" in n] == [
            "Skipped invalid deck(s): broken.yaml. "
            f"Run `drill decks check {deck_dir / 'broken.yaml'}` for details."
        ]  # the command that finds the problem: this deck dir is not one `decks check` knows
        assert [r[0] for r in home_rows(pilot)] == ["Alpha deck", "Beta deck"]


@run_async
async def test_nothing_due_stays_home(make_app, query) -> None:
    async with make_app().run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        await pilot.press("space", "4", "space", "4")
        await pilot.press("enter")  # summary -> home
        await pilot.pause()
        await pilot.press("enter")  # beta has nothing left today
        await pilot.pause()
        assert isinstance(pilot.app.screen, HomeScreen)
        await pilot.press("q")
        await pilot.pause()
        assert not pilot.app.is_running and pilot.app.return_code == 0
    assert query("SELECT count(*) FROM review_log") == [(2,)]


@run_async
async def test_locked_database_gives_a_notice_and_keeps_the_card(
    make_app, query, home, monkeypatch
) -> None:
    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 100)
    app = make_app()
    notices: list[tuple[str, str]] = []
    original = app.notify

    def record(message: str, **kwargs) -> None:
        notices.append((message, kwargs.get("severity", "information")))
        original(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = review_screen(pilot)
        await pilot.press("space")
        other = sqlite3.connect(home / "drill.sqlite3", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another copy of drill is writing
        try:
            await pilot.press("3")
        finally:
            other.execute("ROLLBACK")
            other.close()
        [(error, _)] = [n for n in notices if n[1] == "error"]
        assert error.startswith("Not saved: ") and error.endswith(". Try again.")
        assert "database is locked" in error and "\n" not in error
        assert screen.card.id == "a1" and screen.revealed
        assert log_rows(query) == []
        await pilot.press("3")  # lock released: the retry commits
        assert log_rows(query) == [("a1", 3)]
        assert screen.card.id == "a2"


GAMMA = """\
deck: gamma
title: Gamma deck
cards:
  - id: g1
    level: medium
    front: Does DDP keep replicas identical?
    back: Yes; the all-reduce averages gradients before every step.
    lab:
      run: ddp-baseline
      params: {steps: 4}
"""


@run_async
async def test_l_opens_the_lab_panel_for_a_card_with_a_lab(make_app, deck_dir, query) -> None:
    (deck_dir / "gamma.yaml").write_text(GAMMA)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = review_screen(pilot)
        await pilot.press("l")  # a1 has no lab: nothing opens
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # gamma
        await settle(pilot)
        screen = review_screen(pilot)
        assert screen.card.id == "g1"
        await pilot.press("l")
        await pilot.pause()
        assert type(app.screen).__name__ == "LabPanelScreen"
        await pilot.press("escape")  # leave without running
        await pilot.pause()
        assert app.screen is screen and screen.card.id == "g1"
        assert query("SELECT count(*) FROM review_log") == [(0,)]


@run_async
async def test_capital_l_on_home_opens_the_labs_screen(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("L")
        await pilot.pause()
        assert type(app.screen).__name__ == "LabsScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


KATA = """\
deck: kata
title: Kata deck
cards:
  - id: k1
    level: medium
    exercise: first-nan
    front: Which module produced the first NaN?
    back: Hook every module's forward and stop at the first non-finite output.
"""


async def _open_kata_card(pilot: Pilot) -> ReviewScreen:
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)
    screen = review_screen(pilot)
    while screen.card.id != "k1":  # the decks are listed in id order: walk to kata
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = review_screen(pilot)
    return screen


@run_async
async def test_e_opens_the_cards_exercise_and_escape_comes_back(make_app, deck_dir, query) -> None:
    (deck_dir / "kata.yaml").write_text(KATA)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_kata_card(pilot)
        await pilot.press("e")
        await until(pilot, lambda: type(app.screen).__name__ == "ExerciseScreen")
        assert app.screen.info.name == "first-nan"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert screen.card.id == "k1"
    assert query("SELECT count(*) FROM review_log") == [(0,)]


@pytest.mark.lab
@run_async
async def test_solving_the_cards_exercise_first_try_rates_it_good(make_app, deck_dir, query):
    (deck_dir / "kata.yaml").write_text(KATA)
    app = make_app()
    solution = get_exercise("first-nan").solution_path.read_text()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_kata_card(pilot)
        await pilot.press("e")
        await until(pilot, lambda: type(app.screen).__name__ == "ExerciseScreen")
        app.screen.query_one("#ex-editor").load_text(solution)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "Solved" in text_of(pilot, "#ex-verdict-text"), tries=3000)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await until(pilot, lambda: "Rated Good in the exercise" in text_of(pilot, "#reveal-hint"))
    assert query("SELECT card_id, rating FROM review_log") == [("k1", 3)]


@run_async
async def test_a_card_with_a_lab_starts_the_warm_launcher_when_painted(
    make_app, deck_dir, monkeypatch
) -> None:
    """Issue 34: the launcher starts in the background while the card is read, not on `l`;
    only in a real terminal (headless Pilot runs never start torch)."""
    import drill.labs.warmup

    started: list[str] = []
    monkeypatch.setattr(drill.labs.warmup, "prewarm", lambda: started.append("prewarm"))
    (deck_dir / "gamma.yaml").write_text(GAMMA)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")  # alpha's cards have no lab: nothing starts
        await settle(pilot)
        assert review_screen(pilot).card.id == "a1" and started == []
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # gamma: g1 has a lab
        await settle(pilot)
        assert review_screen(pilot).card.id == "g1"
        assert started == []  # headless (a test): never
        monkeypatch.setattr(type(app), "is_headless", property(lambda _app: False))
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("enter")  # gamma again, "in a terminal" now
        await settle(pilot)
        assert review_screen(pilot).card.id == "g1"
        await until(pilot, lambda: started == ["prewarm"])
