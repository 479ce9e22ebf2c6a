"""Personal FSRS parameters: review histories become FSRSItems, the fit recovers a simulated
learner, fsrs-rs output is checked against what py-fsrs accepts, and the subprocess job reports
progress, results, too-few-reviews and timeouts."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.errors import DrillError
from drill.review.optimize import (
    MIN_ITEMS,
    Evaluation,
    FitJob,
    FitResult,
    NotEnoughReviews,
    OptimizeError,
    adopt_parameters,
    build_items,
    fit_parameters,
    review_histories,
    usable_parameters,
)
from drill.review.review_log import LoggedReview
from drill.review.scheduler import make_scheduler
from drill.settings import load_settings
from tests.support.synthetic_reviews import synthetic_reviews, true_parameters, write_review_log

T0 = datetime(2025, 3, 3, 10, 0, tzinfo=UTC)


def _review(card: str, at: datetime, rating: int, state: int = 2) -> LoggedReview:
    # state before the review: a card's reviews after its first are not of a new card (0),
    # which would read as a reset (see test_reset_starts_the_cards_history_afresh)
    return LoggedReview(card, at, rating, state, 1000)


@pytest.fixture(scope="module")
def log_3000() -> list[LoggedReview]:
    return synthetic_reviews(3000)


def test_items_are_one_per_review_on_a_later_day_with_same_day_steps_kept() -> None:
    reviews = [
        _review("a", T0, 3),
        _review("a", T0 + timedelta(minutes=10), 1),  # same day: short-term step, no item
        _review("a", T0 + timedelta(days=2), 3),
        _review("a", T0 + timedelta(days=5), 1),
        _review("b", T0, 4),  # a single review: nothing to predict
    ]
    assert review_histories(reviews, day_start_hour=4, tz=UTC) == [
        [(3, 0), (1, 0), (3, 2)],
        [(3, 0), (1, 0), (3, 2), (1, 3)],
    ]
    assert len(build_items(reviews, day_start_hour=4, tz=UTC)) == 2


def test_the_day_starts_at_day_start_hour_local_time() -> None:
    evening = datetime(2025, 3, 3, 22, 0, tzinfo=UTC)
    small_hours = evening + timedelta(hours=5)  # 03:00 next calendar day, before a 04:00 start
    reviews = [_review("a", evening, 3), _review("a", small_hours, 3)]
    assert review_histories(reviews, day_start_hour=4, tz=UTC) == []  # the same drill day
    assert review_histories(reviews, day_start_hour=0, tz=UTC) == [[(3, 0), (3, 1)]]


def test_fit_improves_log_loss_and_moves_toward_the_true_learner(
    log_3000: list[LoggedReview],
) -> None:
    messages: list[str] = []
    result = fit_parameters(log_3000, tz=UTC, progress=messages.append)
    assert result.reviews == 3000 and result.items >= MIN_ITEMS
    assert result.current == tuple(DEFAULT_PARAMETERS)
    assert result.after.log_loss < result.before.log_loss
    assert result.improves
    Scheduler(parameters=result.fitted)  # py-fsrs accepts them (it raises when out of bounds)
    truth, default = true_parameters()[:4], DEFAULT_PARAMETERS[:4]
    fitted_gap = sum(abs(f - t) for f, t in zip(result.fitted[:4], truth, strict=True))
    default_gap = sum(abs(d - t) for d, t in zip(default, truth, strict=True))
    assert fitted_gap < default_gap / 2  # the initial stabilities are recovered
    assert any("fitting" in m for m in messages)


def test_too_few_usable_reviews_is_not_enough_reviews() -> None:
    reviews = synthetic_reviews(200)
    with pytest.raises(NotEnoughReviews) as caught:
        fit_parameters(reviews, tz=UTC)
    assert caught.value.reviews == 200 and caught.value.items < MIN_ITEMS
    assert f"need {MIN_ITEMS}" in str(caught.value) and "\n" not in str(caught.value)


def test_fsrs_rs_output_is_mapped_into_py_fsrs_bounds_or_refused() -> None:
    hair_outside = list(DEFAULT_PARAMETERS)
    hair_outside[19] = 0.800000011920929  # 0.8 as float32: py-fsrs' upper bound is 0.8
    assert usable_parameters(hair_outside)[19] == 0.8
    with pytest.raises(OptimizeError, match=r"returned 19 parameters.*21"):
        usable_parameters(DEFAULT_PARAMETERS[:19])
    far_outside = list(DEFAULT_PARAMETERS)
    far_outside[4] = 50.0
    with pytest.raises(OptimizeError, match=r"fsrs_parameters\[4\]"):
        usable_parameters(far_outside)
    with pytest.raises(OptimizeError):
        usable_parameters([float("nan")] * 21)


def test_fit_job_runs_in_a_subprocess_with_progress(
    tmp_path: Path, log_3000: list[LoggedReview]
) -> None:
    db = write_review_log(tmp_path / "drill.sqlite3", log_3000)
    messages: list[str] = []
    result = FitJob(db, day_start_hour=4).run(messages.append)
    assert messages[0] == "reading the review log" and any("fitting" in m for m in messages)
    assert result.reviews == 3000 and result.improves
    assert len(result.fitted) == 21
    Scheduler(parameters=result.fitted)


def test_fit_job_reports_too_few_reviews(tmp_path: Path) -> None:
    db = write_review_log(tmp_path / "drill.sqlite3", synthetic_reviews(100))
    with pytest.raises(NotEnoughReviews) as caught:
        FitJob(db).run()
    assert caught.value.reviews == 100


def test_fit_job_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    db = write_review_log(tmp_path / "drill.sqlite3", synthetic_reviews(100))
    job = FitJob(db, timeout_s=0.001)  # far less than a Python interpreter needs to start
    with pytest.raises(OptimizeError, match=r"longer than 0\.001 s"):
        job.run()
    assert job._process is not None and job._process.returncode is not None


def test_a_cancelled_job_does_not_start() -> None:
    job = FitJob(Path("/nonexistent/drill.sqlite3"))
    job.cancel()
    with pytest.raises(OptimizeError, match="cancelled"):
        job.run()


def test_an_unreadable_database_is_a_fixable_error(tmp_path: Path) -> None:
    db = tmp_path / "drill.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DrillError) as caught:
        FitJob(db).run()
    assert not isinstance(caught.value, OptimizeError)  # the CLI exits 2, not 1
    assert str(db) in str(caught.value)


def _fake_worker(job: FitJob, script: str) -> FitJob:
    job.command = [sys.executable, "-c", script]
    return job


# A child that writes 200 KB to stderr (a pipe holds 64 KB) before its stdout lines.
FLOOD_STDERR = (
    "import sys; sys.stderr.write('x' * 200_000 + '\\nlast words\\n'); sys.stderr.flush()\n"
)


def test_a_worker_that_floods_stderr_still_delivers_its_result() -> None:
    fitted = tuple(DEFAULT_PARAMETERS)
    result = FitResult(500, 450, fitted, fitted, Evaluation(0.4, 0.1), Evaluation(0.3, 0.05))
    progress = json.dumps({"event": "progress", "message": "working"})
    reply = json.dumps({"event": "result", "result": result.to_dict()})
    script = FLOOD_STDERR + f"print({progress!r}); print({reply!r})"
    # Reading a stderr pipe only after stdout's end would block the child until this deadline.
    job = _fake_worker(FitJob(Path("unused"), timeout_s=30.0), script)
    messages: list[str] = []
    start = time.monotonic()
    assert job.run(messages.append) == result
    assert time.monotonic() - start < 15
    assert messages == ["working"]


def test_a_worker_that_ends_without_a_result_is_explained_by_its_last_stderr_line() -> None:
    job = _fake_worker(FitJob(Path("unused"), timeout_s=30.0), FLOOD_STDERR + "raise SystemExit(3)")
    with pytest.raises(OptimizeError, match=r"ended without a result: last words$"):
        job.run()


def test_cancel_from_another_thread_stops_a_running_worker() -> None:
    job = _fake_worker(FitJob(Path("unused"), timeout_s=30.0), "import time; time.sleep(60)")
    threading.Timer(0.5, job.cancel).start()
    start = time.monotonic()
    with pytest.raises(OptimizeError, match="the fit was cancelled"):
        job.run()
    assert time.monotonic() - start < 15


def test_worker_protocol_stays_clean_json_lines(tmp_path: Path) -> None:
    db = write_review_log(tmp_path / "drill.sqlite3", synthetic_reviews(100))
    done = subprocess.run(
        [sys.executable, "-m", "drill.review.optimize_worker", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["event"] == "error" and lines[-1]["kind"] == "not-enough"
    assert done.returncode == 1


def test_adopted_parameters_are_used_by_the_scheduler(tmp_path: Path) -> None:
    settings_file = tmp_path / "settings.toml"
    settings_file.write_text("# mine\ndesired_retention = 0.85\n", encoding="utf-8")
    fitted = true_parameters()
    adopt_parameters(fitted, settings_file)
    text = settings_file.read_text(encoding="utf-8")
    assert text.startswith("# mine\ndesired_retention = 0.85\n")
    settings = load_settings(settings_file)
    assert settings.fsrs_parameters == pytest.approx(fitted)
    assert make_scheduler(settings).parameters == pytest.approx(fitted)
    again = list(fitted)
    again[0] = 0.3
    adopt_parameters(again, settings_file)  # replaces the line instead of adding a second
    assert settings_file.read_text(encoding="utf-8").count("fsrs_parameters") == 1
    assert load_settings(settings_file).fsrs_parameters[0] == 0.3  # type: ignore[index]
