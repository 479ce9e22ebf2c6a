"""Personal FSRS-6 parameters fitted to the user's own review log (UI-free).

The fit is fsrs-rs-python's `compute_parameters` (Rust, no torch; ~35 s of py-fsrs' torch
optimizer becomes well under a second). The app never runs it in its own process: `FitJob`
starts `python -m drill.review.optimize_worker` under trainer_lab.procs.supervise (deadline,
whole-tree kill), reads its progress lines and its result, and can be cancelled from another
thread (the TUI's button runs `FitJob.run` in a worker thread; the CLI calls it directly).
`fit_parameters` is the in-process core the worker (and the benchmark) use.

What counts as a usable review: a review of a card on a later day than that card's previous
review (each becomes one FSRSItem; same-day reviews ride along as short-term history). fsrs-rs
itself returns the defaults below 8 such items and fits only the 4 initial stabilities below 64;
we ask for MIN_ITEMS = 400 before fitting all 21, so the remaining 17 are not fitted to noise.
"""

from __future__ import annotations

import json
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import tzinfo
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from drill.errors import DrillError
from drill.review.optimize_worker import PARENT_ENV  # stdlib-only at import
from drill.review.queue import learner_date
from drill.review.review_log import NEW, LoggedReview
from drill.settings import FSRS_PARAMETER_COUNT, Settings, checked_fsrs_parameters

if TYPE_CHECKING:
    from fsrs_rs_python import FSRSItem

MIN_ITEMS = 400
WORKER_MODULE = "drill.review.optimize_worker"
Progress = Callable[[str], None]


class OptimizeError(DrillError):
    """The fit could not run or gave parameters drill cannot use (message is one line)."""


class NotEnoughReviews(OptimizeError):
    def __init__(self, items: int, reviews: int, needed: int = MIN_ITEMS) -> None:
        self.items, self.reviews, self.needed = items, reviews, needed
        super().__init__(
            f"not enough reviews to fit FSRS parameters: {items} usable of {reviews} logged "
            f"(a usable review is a card reviewed again on a later day; need {needed})"
        )


@dataclass(frozen=True)
class Evaluation:
    log_loss: float  # mean binary cross-entropy of predicted recall vs. pass/fail; lower = better
    rmse_bins: float  # calibration error over bins (fsrs-rs' RMSE(bins))


@dataclass(frozen=True)
class FitResult:
    reviews: int  # review-log rows read
    items: int  # usable reviews (see module docstring)
    current: tuple[float, ...]  # the parameters in use before the fit
    fitted: tuple[float, ...]
    before: Evaluation  # the current parameters on the user's log
    after: Evaluation  # the fitted parameters on the same log (in-sample)

    @property
    def improves(self) -> bool:
        return self.after.log_loss < self.before.log_loss

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FitResult:
        return cls(
            reviews=int(data["reviews"]),
            items=int(data["items"]),
            current=tuple(float(v) for v in data["current"]),
            fitted=tuple(float(v) for v in data["fitted"]),
            before=Evaluation(**data["before"]),
            after=Evaluation(**data["after"]),
        )


def default_parameters() -> tuple[float, ...]:
    from fsrs.scheduler import DEFAULT_PARAMETERS

    return tuple(DEFAULT_PARAMETERS)


# --- the fit (runs in the worker process) --------------------------------------------------------
Step = tuple[int, int]  # (rating 1..4, delta_t: whole days since the card's previous review)


def review_histories(
    reviews: Sequence[LoggedReview], *, day_start_hour: int = 4, tz: tzinfo | None = None
) -> list[list[Step]]:
    """One history per usable review: the card's steps up to and including it. Days start at
    `day_start_hour` local time (`tz`, default the machine's), as drill's "today" does, and
    delta_t counts learner days, as the scheduler does (drill.times.days_between). A review of
    a card as new after earlier reviews follows a reset (the browser's "reset"): the card's
    history starts afresh there, and the reviews before it are left out, as Anki's fit does;
    a card reset after its last review has no history (since_last_reset)."""
    by_card: dict[str, list[LoggedReview]] = defaultdict(list)
    for review in reviews:
        by_card[review.card_id].append(review)
    histories: list[list[Step]] = []
    for history in by_card.values():
        history.sort(key=lambda r: r.reviewed_at)
        history = since_last_reset(history)
        steps: list[Step] = []
        last_day = None
        for review in history:
            day = learner_date(review.reviewed_at, day_start_hour, tz)
            delta = 0 if last_day is None else (day - last_day).days
            steps.append((review.rating, delta))
            if delta > 0:
                histories.append(list(steps))
            last_day = day
    return histories


def since_last_reset(history: Sequence[LoggedReview]) -> list[LoggedReview]:
    """One card's reviews (oldest first) from its last reset on: the last review made while the
    card was new that follows an earlier review, or none when the card was reset after its
    last review (`reset_after`, read from the card's state: new again)."""
    start = 0
    for index, review in enumerate(history):
        if review.reset_after:
            start = index + 1
        elif index > 0 and review.state == NEW:
            start = index
    return list(history[start:])


def build_items(
    reviews: Sequence[LoggedReview], *, day_start_hour: int = 4, tz: tzinfo | None = None
) -> list[FSRSItem]:
    """review_histories as fsrs-rs FSRSItems (those with a long-term review)."""
    from fsrs_rs_python import FSRSItem, FSRSReview

    items = (
        FSRSItem([FSRSReview(rating, delta) for rating, delta in steps])
        for steps in review_histories(reviews, day_start_hour=day_start_hour, tz=tz)
    )
    return [item for item in items if item.long_term_review_cnt() > 0]


def usable_parameters(raw: Sequence[float]) -> tuple[float, ...]:
    """fsrs-rs' output as parameters the fsrs package accepts. fsrs-rs computes in float32 and
    clamps to its own bounds, which can sit a hair outside py-fsrs' (0.8 as f32 is 0.80000001):
    values are rounded to 6 decimals and nudged inside by at most 1e-4; anything else (another
    parameter count, a value really out of bounds) is refused with OptimizeError."""
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    if len(raw) != FSRS_PARAMETER_COUNT:
        raise OptimizeError(
            f"fsrs-rs-python returned {len(raw)} parameters; the fsrs package schedules with "
            f"{FSRS_PARAMETER_COUNT} (FSRS-6): not adopting them"
        )
    values = []
    for value, low, high in zip(raw, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True):
        value = round(float(value), 6)
        if math.isfinite(value) and low - 1e-4 <= value <= high + 1e-4:
            value = min(max(value, low), high)
        values.append(value)
    try:
        return checked_fsrs_parameters(values)
    except DrillError as error:
        raise OptimizeError(f"the fitted parameters are not usable: {error}") from None


def evaluate(parameters: Sequence[float], items: Sequence[FSRSItem]) -> Evaluation:
    from fsrs_rs_python import FSRS

    result = FSRS(list(parameters)).evaluate(list(items))
    return Evaluation(float(result.log_loss), float(result.rmse_bins))


def fit_parameters(
    reviews: Sequence[LoggedReview],
    *,
    current: Sequence[float] | None = None,
    day_start_hour: int = 4,
    tz: tzinfo | None = None,
    min_items: int = MIN_ITEMS,
    progress: Progress | None = None,
) -> FitResult:
    """Fit FSRS-6 parameters to `reviews`; compare the log loss of `current` (default: the
    fsrs package's defaults) and the fitted ones on the same items. In-process: call it from a
    worker, not from the TUI. NotEnoughReviews below `min_items` usable reviews."""
    from fsrs_rs_python import FSRS

    say = progress or (lambda _message: None)
    current = tuple(current) if current else default_parameters()
    say(f"building review histories from {len(reviews)} reviews")
    items = build_items(reviews, day_start_hour=day_start_hour, tz=tz)
    if len(items) < min_items:
        raise NotEnoughReviews(len(items), len(reviews), min_items)
    say(f"evaluating the current parameters on {len(items)} usable reviews")
    before = evaluate(current, items)
    say("fitting (fsrs-rs)")
    try:
        raw = FSRS(list(current)).compute_parameters(items)
    except (ValueError, RuntimeError) as error:
        raise OptimizeError(f"the fit failed: {error}") from None
    fitted = usable_parameters(raw)
    say("evaluating the fitted parameters")
    after = evaluate(fitted, items)
    return FitResult(len(reviews), len(items), current, fitted, before, after)


# --- the subprocess, seen from the app ---------------------------------------------------------
class FitJob:
    """One fit in a subprocess. `run()` blocks (call it from a thread in the TUI) and returns
    the FitResult or raises OptimizeError / NotEnoughReviews; `cancel()` from any thread kills
    the worker, and `run()` then raises OptimizeError("cancelled")."""

    def __init__(
        self,
        db_path: Path,
        *,
        current: Sequence[float] | None = None,
        day_start_hour: int = 4,
        timeout_s: float = 600.0,
    ) -> None:
        self.command = [
            sys.executable, "-m", WORKER_MODULE, "--db", str(db_path),
            "--day-start-hour", str(day_start_hour),
        ]  # fmt: skip
        if current:
            self.command += ["--current", json.dumps(list(current))]
        self.timeout_s = timeout_s
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._stopped: str | None = None

    def cancel(self, reason: str = "cancelled") -> None:
        with self._lock:
            self._stopped = self._stopped or reason
        self._cancel.set()

    def run(self, on_progress: Progress | None = None) -> FitResult:
        from trainer_lab.procs import supervise

        with self._lock:
            if self._stopped:
                raise OptimizeError(self._stopped)
        messages: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        replies: list[dict[str, Any]] = []

        def deliver() -> None:  # progress reaches on_progress in run()'s own thread
            while not messages.empty():
                message = messages.get()
                if message.get("event") == "progress" and on_progress is not None:
                    on_progress(str(message.get("message", "")))
                elif message.get("event") in ("result", "error"):
                    replies.append(message)

        # stderr goes to a file: a pipe read only after stdout would block a child that writes
        # more than the pipe holds (~64 KB, e.g. the Rust fit's chatter) until the deadline.
        with tempfile.TemporaryFile() as errors:
            process = self._process = subprocess.Popen(
                self.command,
                stdout=subprocess.PIPE,
                stderr=errors,
                stdin=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
                env={**os.environ, PARENT_ENV: str(os.getpid())},
            )
            reader = threading.Thread(target=_read_messages, args=(process, messages), daemon=True)
            reader.start()
            ended = supervise(process, time.monotonic() + self.timeout_s, self._cancel, deliver)
            reader.join(timeout=5)
            deliver()
            stderr = _tail(errors)
        if ended.stop == "timeout":
            raise OptimizeError(f"the fit was stopped: it took longer than {self.timeout_s:g} s")
        if ended.stop == "cancelled":
            raise OptimizeError(f"the fit was {self._stopped or 'cancelled'}")
        return _reply_result(replies[-1] if replies else None, process.returncode, stderr)


def _tail(file: IO[bytes], size: int = 4096) -> str:
    """The end of what the worker wrote to `file` (only its last line is ever shown)."""
    file.seek(max(0, os.fstat(file.fileno()).st_size - size))
    return file.read().decode("utf-8", errors="replace")


def _read_messages(process: subprocess.Popen[str], messages: queue.SimpleQueue[Any]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        message = _parse(line)
        if message is not None:
            messages.put(message)


def app_fit_job(settings: Settings | None = None, *, timeout_s: float = 600.0) -> FitJob:
    """The fit for the app's own database and settings (what `drill optimize` and the stats
    screen run): compares against the user's current parameters, days as drill counts them."""
    from drill.paths import database_path
    from drill.settings import load_settings

    settings = settings or load_settings()
    return FitJob(
        database_path(),
        current=settings.fsrs_parameters,
        day_start_hour=settings.day_start_hour,
        timeout_s=timeout_s,
    )


def _parse(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _reply_result(reply: dict[str, Any] | None, returncode: int, stderr: str) -> FitResult:
    if reply is None:
        tail = " ".join(stderr.strip().splitlines()[-1:])[:200] or f"exit status {returncode}"
        raise OptimizeError(f"the fit process ended without a result: {tail}")
    if reply["event"] == "error":
        if reply.get("kind") == "not-enough":
            raise NotEnoughReviews(int(reply["items"]), int(reply["reviews"]), int(reply["needed"]))
        message = str(reply.get("message", "the fit failed"))
        if reply.get("kind") == "usage":  # bad settings, unreadable database: exit 2 in the CLI
            raise DrillError(message)
        raise OptimizeError(message)
    try:
        return FitResult.from_dict(reply["result"])
    except (KeyError, TypeError, ValueError) as error:
        raise OptimizeError(f"the fit process sent a malformed result: {error}") from None


def adopt_parameters(parameters: Sequence[float], settings_file: Path | None = None) -> Path:
    """Store `parameters` as the user's fsrs_parameters in settings.toml (the scheduler uses
    them from the next review on). Returns the settings path; SettingsError on failure."""
    from drill.settings import save_fsrs_parameters

    return save_fsrs_parameters(parameters, settings_file)
