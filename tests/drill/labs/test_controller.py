"""RunController, certainty-based marking and the lab history, without a screen."""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from drill.decks.models import Card
from drill.labs.controller import (
    MARKING,
    Prediction,
    RunController,
    score_outcome,
    suggest_rating,
)
from drill.labs.runs import LabRuns
from tests.support.lab_fakes import OK_RESULT, FakeRunner
from tests.support.lab_screens import record_lab_run


def test_marking_table() -> None:
    assert [suggest_rating(True, c) for c in ("high", "medium", "low")] == [4, 3, 2]
    assert [suggest_rating(False, c) for c in ("low", "medium", "high")] == [2, 1, 1]
    assert len(MARKING) == 6
    with pytest.raises(ValueError):
        suggest_rating(True, "certain")


def test_score_right_and_wrong(card: Card) -> None:
    right = score_outcome(card, OK_RESULT, Prediction(0, "high"))
    assert right.observed_choice == 0 and right.right is True and right.suggested_rating == 4
    assert [c.passed for c in right.claims] == [True, True]
    wrong = score_outcome(card, OK_RESULT, Prediction(1, "medium"))
    assert wrong.right is False and wrong.suggested_rating == 1


def test_score_failed_claim_and_no_prediction(card: Card) -> None:
    result = {**OK_RESULT, "observations": {**OK_RESULT["observations"], "max_rel_loss_diff": 0.5}}
    outcome = score_outcome(card, result, None)
    assert [c.passed for c in outcome.claims] == [False, True]
    assert "0.5" in outcome.claims[0].detail
    assert outcome.suggested_rating is None and outcome.observed_choice == 0


def test_score_error_result_makes_no_suggestion(card: Card) -> None:
    result = {"status": "timeout", "error": {"message": "hard deadline of 90 s passed"}}
    outcome = score_outcome(card, result, Prediction(0, "high"))
    assert outcome.status == "timeout" and outcome.suggested_rating is None
    assert outcome.error == "hard deadline of 90 s passed" and outcome.claims == ()


def test_controller_streams_and_finishes(card: Card, tmp_path: Path) -> None:
    ticks = itertools.count()
    runner = FakeRunner()
    finished: list[tuple[str, float]] = []
    controller = RunController(
        "ddp-baseline",
        {"steps": 4},
        2,
        tmp_path / "run",
        card=card,
        prediction=Prediction(0, "medium"),
        runner=runner,
        clock=lambda: float(next(ticks)),
        on_finish=lambda outcome, took: finished.append((outcome.status, took)),
    )
    assert controller.status == "idle"
    controller.start()
    assert runner.emitted.wait(10)
    assert controller.status == "running"
    done, total, step, message = controller.progress()
    assert (done, total, step) == (1, 1, 4) and "finished" in message
    lines = controller.drain_lines()
    assert lines[0].endswith("start ddp-baseline W=2 steps=4")
    assert any("step 3" in line for line in lines)
    assert controller.drain_lines() == []
    runner.release.set()
    assert controller.wait(10)
    assert controller.status == "ok" and finished and finished[0][0] == "ok"
    assert controller.outcome is not None and controller.outcome.suggested_rating == 3
    assert any("check ok" in line for line in controller.drain_lines())
    assert runner.calls == [{"name": "ddp-baseline", "params": {"steps": 4}, "world_size": 2}]


def test_controller_says_when_there_is_something_new(tmp_path: Path) -> None:
    """on_change comes after every log line (none is left unannounced) and once more when the
    run has finished, so a screen told by it never needs to poll."""
    runner = FakeRunner()
    seen: list[tuple[int, bool]] = []  # (lines waiting, finished) at each call
    told_finished = threading.Event()

    def on_change() -> None:
        seen.append((len(controller.drain_lines()), controller.finished))
        if controller.finished:
            told_finished.set()

    controller = RunController(
        "ddp-baseline", {}, 2, tmp_path / "run", runner=runner, on_change=on_change
    )
    controller.start()
    assert runner.emitted.wait(10)
    runner.release.set()
    assert told_finished.wait(10)
    assert all(waiting == 1 for waiting, _ in seen[:-1])  # each line announced as it came
    assert seen[-1] == (0, True)  # then the end, with nothing left unread
    assert [finished for _, finished in seen].count(True) == 1


def test_controller_cancel(tmp_path: Path) -> None:
    runner = FakeRunner()
    controller = RunController("ddp-baseline", {}, 2, tmp_path / "run", runner=runner)
    controller.start()
    assert runner.emitted.wait(10)
    controller.cancel()
    assert controller.wait(10)
    assert controller.status == "cancelled"
    assert not (tmp_path / "run" / "result.json").exists()


def test_controller_runner_error_is_an_outcome(tmp_path: Path) -> None:
    def broken(*_args: Any) -> dict[str, Any]:
        raise ValueError("param steps: 0 is not a valid int in [1, 200]")

    controller = RunController("ddp-baseline", {}, 2, tmp_path, runner=broken)
    controller.start()
    assert controller.wait(10)
    assert controller.outcome is not None and controller.status == "error"
    assert controller.outcome.error == "ValueError: param steps: 0 is not a valid int in [1, 200]"


def test_history_roundtrip(db: Any, card: Card, tmp_path: Path) -> None:
    history = LabRuns(db)
    started = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    run_dir = tmp_path / "run"
    run_id = record_lab_run(db, card, run_dir, started, 2.5, prediction=Prediction(0, "high"),
                            deck_id="d", predicted="bit-identical")  # fmt: skip
    history.set_rating(run_id, 4)
    [record] = history.runs(card_id=card.id)
    assert (record.status, record.duration_s, record.rating) == ("ok", 2.5, 4)
    assert record.prediction_right is True and record.suggested_rating == 4
    assert record.summary["checks_passed"] == 2 and record.certainty == "high"
    assert record.started_at == started and record.params == {"steps": 4}
    assert history.runs(card_id="other") == []
    assert history.last_by_lab()["ddp-baseline"].id == run_id
    run_dir.mkdir()
    (run_dir / "result.json").write_text('{"lab": "ddp-baseline", "status": "ok"}')
    loaded = record.load_result()
    assert loaded is not None and (loaded["status"], loaded["checks"]) == ("ok", [])


def test_history_closes_interrupted_runs(db: Any, tmp_path: Path) -> None:
    history = LabRuns(db)
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    mine = record_lab_run(db, None, tmp_path, now, None)
    orphaned = record_lab_run(db, None, tmp_path, now, None)
    assert history.close_interrupted(running_ids={mine}) == 1
    assert history.get(orphaned).status == "cancelled"  # type: ignore[union-attr]
    assert history.get(mine).status == "running"  # type: ignore[union-attr]


def test_a_result_off_the_contract_is_scored_as_an_error(card: Card) -> None:
    outcome = score_outcome(card, {"status": "finished", "observations": []}, Prediction(0, "high"))
    assert outcome.status == "error" and outcome.suggested_rating is None
    assert outcome.error is not None and "unreadable result" in outcome.error


def test_claims_outside_the_cards_where_are_not_scored() -> None:
    data = {
        "id": "w", "level": "easy", "front": "q", "back": "a",
        "lab": {"run": "throughput-mfu", "where": "device == cpu", "expect": ["share < 0.3"]},
        "predict": {"ask": "?", "choices": [{"text": "low", "when": "share < 0.3"},
                                            {"text": "high", "when": "share >= 0.3"}]},
    }  # fmt: skip
    card = Card.model_validate(data)
    gpu = {**OK_RESULT, "observations": {"device": "cuda:0", "share": 0.9}}
    outcome = score_outcome(card, gpu, Prediction(0, "high"))
    assert outcome.claims == () and outcome.observed_choice is None
    assert outcome.suggested_rating is None and outcome.right is None
    assert outcome.out_of_scope == "not where device == cpu (device=cuda:0)"
    cpu = {**OK_RESULT, "observations": {"device": "cpu", "share": 0.9}}
    scored = score_outcome(card, cpu, Prediction(0, "high"))
    assert scored.out_of_scope is None and [c.passed for c in scored.claims] == [False]
    assert scored.observed_choice == 1 and scored.right is False
