"""The lab panel end to end in Pilot against a fast fake runner: refuse bad input, predict,
run, stream, finish, score, rate; and cancel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList, RichLog

from drill.decks.models import Card
from drill.tui.screens.lab_results import LabResultsScreen
from tests.support.lab_fakes import Event, FakeRunner
from tests.support.lab_screens import make_panel, seen_long_ago
from tests.support.pilot import HostApp, choose, run_async, text_of, until


def review_ratings(db: Any) -> list[tuple[str, int]]:
    return [(r.card_id, r.rating) for r in db.review.reviews()]


def ratings_after_seed(db: Any) -> list[tuple[str, int]]:
    """The review rows after seen_long_ago's one (the panel rates from outside review)."""
    return review_ratings(db)[1:]


@run_async
async def test_predict_run_stream_score_accept(card: Card, db: Any, tmp_path: Path) -> None:
    seen_long_ago(db, card)
    runner = FakeRunner()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        # no prediction yet: refused
        await pilot.press("ctrl+r")
        assert "pick your prediction" in text_of(pilot, "#param-error")
        # a bad param: refused with the param's own message
        steps = pilot.app.screen.query_one("#param-0")
        steps.value = "0"  # type: ignore[attr-defined]
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        assert "param steps: 0 is not a valid int in [1, 200]" in text_of(pilot, "#param-error")
        world = pilot.app.screen.query_one("#param-world")
        world.value = "1"  # type: ignore[attr-defined]
        steps.value = "4"  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        assert "world size 1 is out of range" in text_of(pilot, "#param-error")
        assert runner.calls == []
        world.value = "2"  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        log = pilot.app.screen.query_one("#lab-log", RichLog)
        await until(pilot, lambda: any("step 4" in line.text for line in log.lines))
        status = text_of(pilot, "#run-status")
        assert status.startswith("running · 1/1 · step 4") and "escape: cancel" in status
        assert steps.disabled  # the form is locked during the run
        runner.release.set()
        await until(pilot, lambda: panel.query_one("#outcome").display)
        outcome = text_of(pilot, "#outcome")
        assert "You predicted: bit-identical (high certainty)" in outcome
        assert "Observed:      bit-identical" in outcome and "right" in outcome
        assert "✓ held  max_rel_loss_diff <= 1e-5" in outcome
        assert "Suggested rating: Easy (4)" in outcome
        assert any("check ok   losses_match" in line.text for line in log.lines)
        await pilot.press("enter")
        await pilot.pause()
        assert app.dismissed == [4]
    assert runner.calls == [
        {"name": "ddp-baseline", "params": {"steps": 4, "grad_sync": "ddp", "tolerance": 1e-5,
                                            "sabotage": "none"}, "world_size": 2}
    ]  # fmt: skip
    assert ratings_after_seed(db) == [(card.id, 4)]
    from drill.labs.runs import LabRuns

    [record] = LabRuns(db).runs(card_id=card.id)
    assert (record.status, record.rating, record.suggested_rating) == ("ok", 4, 4)
    assert record.predicted == "bit-identical" and record.prediction_right is True
    assert (record.run_dir / "result.json").exists()


@run_async
async def test_override_rating_after_wrong_prediction(card: Card, db: Any, tmp_path: Path) -> None:
    seen_long_ago(db, card)
    runner = FakeRunner()
    runner.release.set()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 1)
        await choose(pilot, "certainty", 1)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: panel.query_one("#outcome").display)
        outcome = text_of(pilot, "#outcome")
        assert "wrong" in outcome and "Suggested rating: Again (1)" in outcome
        await pilot.press("2")  # the user overrides Again with Hard
        await pilot.pause()
        assert app.dismissed == [2]
        # the card's past runs are listed in a fresh panel and reopen in the results view
        again = make_panel(card, db, FakeRunner(), tmp_path)
        await app.push_screen(again)
        await until(pilot, lambda: bool(again.query("#past-runs")))
        past = again.query_one("#past-runs", OptionList)
        assert past.option_count == 1 and "· ok · checks 2/2" in str(
            past.get_option_at_index(0).prompt
        )
        past.focus()
        past.highlighted = 0
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LabResultsScreen))
        assert app.screen.result["status"] == "ok"  # type: ignore[attr-defined]
    assert ratings_after_seed(db) == [(card.id, 2)]


@run_async
async def test_escape_cancels_and_stays_then_leaves(card: Card, db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 0)
        await pilot.press("ctrl+r")
        await until(pilot, runner.emitted.is_set)
        log = panel.query_one("#lab-log", RichLog)
        await until(pilot, lambda: any("step 4" in line.text for line in log.lines))
        await pilot.press("escape")  # cancels, and stays on the partial log
        await until(pilot, lambda: panel.query_one("#outcome").display)
        assert app.screen is panel and app.dismissed == []
        assert text_of(pilot, "#run-status").startswith("cancelled")
        assert any("step 4" in line.text for line in log.lines)  # the partial log stays
        await pilot.press("escape")  # then leaves
        await until(pilot, lambda: app.dismissed == [None])
    from drill.labs.runs import LabRuns

    [record] = LabRuns(db).runs(card_id=card.id)
    assert record.status == "cancelled" and record.rating is None
    assert review_ratings(db) == []


@run_async
async def test_rating_on_a_locked_database_is_a_notice_and_can_be_retried(
    card: Card, home: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    import sqlite3

    import storage.db
    from drill.paths import database_path
    from tests.support.pilot import Notices

    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 50)
    db = storage.db.open_database(database_path())
    seen_long_ago(db, card)
    runner = FakeRunner()
    runner.release.set()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    notices = Notices()
    try:
        async with app.run_test(size=(100, 50), message_hook=notices) as pilot:
            await pilot.pause()
            await choose(pilot, "predict-choice", 0)
            await choose(pilot, "certainty", 2)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: panel.query_one("#outcome").display)
            other = sqlite3.connect(db.path, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")  # another copy of drill is writing
            try:
                await pilot.press("enter")
                await pilot.pause()
            finally:
                other.execute("ROLLBACK")
                other.close()
            [error] = notices.messages("error")
            assert error.startswith("Not saved: ") and "database is locked" in error
            assert app.screen is panel and app.dismissed == [] and panel.rated is None
            await pilot.press("enter")  # the lock is gone: the retry is saved
            await pilot.pause()
            assert app.dismissed == [4]
            [said] = notices.messages("information")  # named, and what it did to the card
            assert said.startswith(f"Rated {card.id}: Easy, due in ") and said.endswith(" d")
        assert ratings_after_seed(db) == [(card.id, 4)]
    finally:
        db.close()


class LongLineRunner(FakeRunner):
    """Emits one log line far wider than the panel before the usual progress."""

    LONG = "worker: " + " ".join(f"word{i}" for i in range(60)) + " END"

    def __call__(self, name: str, params: Any, world_size: int, *args: Any) -> Any:
        args[2](Event(0, 1, self.LONG))  # (out_dir, timeout_s, on_progress, cancel)
        return super().__call__(name, params, world_size, *args)


@run_async
async def test_long_log_lines_and_param_help_wrap(card: Card, db: Any, tmp_path: Path) -> None:
    runner = LongLineRunner()
    runner.release.set()
    panel = make_panel(card, db, runner, tmp_path)
    app = HostApp(panel)
    async with app.run_test(size=(80, 50)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+t")  # the debug params too
        await pilot.pause()
        helps = list(panel.query(".param-help"))
        assert any(len(str(h.render())) > h.size.width for h in helps)  # some help is long...
        for h in helps:  # ...and every one gets the lines it needs (not one line, cut)
            assert h.size.height * h.size.width >= len(str(h.render()))
        await choose(pilot, "predict-choice", 0)
        await choose(pilot, "certainty", 2)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: panel.query_one("#outcome").display)
        log = panel.query_one("#lab-log", RichLog)
        await until(pilot, lambda: any("END" in line.text for line in log.lines))
        width = log.scrollable_content_region.width
        assert all(line.cell_length <= width for line in log.lines)
        joined = " ".join(line.text.strip() for line in log.lines)
        assert " ".join(LongLineRunner.LONG.split()) in " ".join(joined.split())
        assert log.max_scroll_x == 0  # nothing to scroll sideways to
