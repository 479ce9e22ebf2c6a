"""Running one lab for a card, without a screen: start, stream, cancel, score.

`RunController` runs a runner function (trainer_lab.api.run_lab by default, torch-free:
the lab itself runs in subprocesses) in a thread with a cancel Event. It calls `on_change`
after each log line and progress event and once the run has finished (the TUI posts itself a
message from there): `drain_lines()` hands over the log lines collected since the last call
(so the screen writes them in batches), `done`/`total`/`step`/`elapsed_s` describe progress.
When the runner
returns, the result is scored by `score_outcome`: the card's `expect` claims, which predict
choice the lab observed, and a suggested rating.

Certainty-based marking (Gardner-Medwin): a prediction is marked by whether it was right and
how sure the user said they were before the run. Being sure and wrong is the costliest error,
so it gets Again; a lucky low-certainty guess is not yet solid knowledge, so it gets Hard.

    prediction   certainty   suggested rating
    right        high        Easy  (4)
    right        medium      Good  (3)
    right        low         Hard  (2)
    wrong        low         Hard  (2)
    wrong        medium      Again (1)
    wrong        high        Again (1)

No suggestion is made when the card has no predict block, when the lab did not produce
observations (error, timeout, cancelled), or when not exactly one choice held.
"""

from __future__ import annotations

import atexit
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.claims.grammar import ClaimError, ClaimOutcome, evaluate, out_of_scope
from trainer_lab.result import (
    LabResult,
    ResultFormatError,
    error_message,
    new_result,
    parse_result,
)

if TYPE_CHECKING:
    from drill.decks.models import Card

CERTAINTIES = ("low", "medium", "high")
MARKING: dict[tuple[bool, str], int] = {
    (True, "high"): 4,
    (True, "medium"): 3,
    (True, "low"): 2,
    (False, "low"): 2,
    (False, "medium"): 1,
    (False, "high"): 1,
}
SCORED_STATUSES = ("ok", "failed")  # statuses whose observations are complete
_STEP = re.compile(r"\bstep (\d+)\b")

# run_lab's signature: (name, params, world_size, out_dir, timeout_s, on_progress, cancel)
Runner = Callable[..., dict[str, Any]]


def suggest_rating(right: bool, certainty: str) -> int:
    """The marking table above; ValueError for an unknown certainty."""
    if certainty not in CERTAINTIES:
        raise ValueError(f"certainty must be one of {', '.join(CERTAINTIES)}, got {certainty!r}")
    return MARKING[(right, certainty)]


@dataclass(frozen=True)
class Prediction:
    choice: int  # index into card.predict.choices
    certainty: str  # low | medium | high

    def __post_init__(self) -> None:
        if self.certainty not in CERTAINTIES:
            raise ValueError(f"unknown certainty {self.certainty!r}")


@dataclass(frozen=True)
class LabOutcome:
    """What a finished run means for a card."""

    status: str
    result: LabResult
    claims: tuple[ClaimOutcome, ...] = ()
    observed_choice: int | None = None  # index of the single predict choice that held
    holding: tuple[int, ...] = ()  # indices of every choice that held
    prediction: Prediction | None = None
    right: bool | None = None
    suggested_rating: int | None = None
    error: str | None = None
    out_of_scope: str | None = None  # the card's `where:` does not hold: nothing was scored


def as_lab_result(raw: Mapping[str, Any], lab: str = "") -> LabResult:
    """A runner's return value read through the result contract (trainer_lab.result); a value
    off the contract becomes an error result saying so, never a crash later."""
    try:
        return parse_result({"lab": lab or "unknown", **raw})
    except ResultFormatError as problem:
        result = new_result(str(raw.get("lab") or lab or "unknown"), {}, 0, Path())
        result["error"] = {"message": f"the lab returned an unreadable result: {problem}"}
        return result


def score_outcome(
    card: Card | None, raw: Mapping[str, Any], prediction: Prediction | None
) -> LabOutcome:
    """Claims of the card against the result's observations, the observed predict choice, and
    the rating suggested by certainty-based marking."""
    result = as_lab_result(raw, card.lab.run if card is not None and card.lab else "")
    status = result["status"]
    error = error_message(result) or None
    if status not in SCORED_STATUSES:
        return LabOutcome(status, result, prediction=prediction, error=error or status)
    observations = result["observations"]
    if card is not None and card.lab is not None:
        try:
            scope = out_of_scope(card.lab.where, observations)
        except ClaimError as failure:
            scope = f"unreadable where: {failure}"
        if scope is not None:  # e.g. CPU-sized claims on a GPU run: neither held nor failed
            return LabOutcome(status, result, prediction=prediction, out_of_scope=scope)
    claims: list[ClaimOutcome] = []
    if card is not None and card.lab is not None:
        for text in card.lab.expect:
            try:
                claims.append(evaluate(text, observations))
            except ClaimError as failure:  # a claim that does not parse fails, visibly
                claims.append(ClaimOutcome(text, False, {}, str(failure)))
    holding: list[int] = []
    if card is not None and card.predict is not None:
        for index, choice in enumerate(card.predict.choices):
            try:
                if evaluate(choice.when, observations).passed:
                    holding.append(index)
            except ClaimError:
                continue  # an unreadable choice cannot be the observed one
    observed = holding[0] if len(holding) == 1 else None
    right = suggested = None
    if prediction is not None and observed is not None:
        right = prediction.choice == observed
        suggested = suggest_rating(right, prediction.certainty)
    return LabOutcome(
        status,
        result,
        tuple(claims),
        observed,
        tuple(holding),
        prediction,
        right,
        suggested,
        error,
    )


def default_runner() -> Runner:
    from trainer_lab.api import run_lab  # torch-free; the lab runs in subprocesses

    return run_lab


@dataclass
class _Progress:
    done: int = 0
    total: int = 0
    step: int | None = None
    message: str = ""
    lines: list[str] = field(default_factory=list)


_ACTIVE: set[RunController] = set()
_ACTIVE_LOCK = threading.Lock()


class RunController:
    """One run of one lab, in a background thread; every public method is thread-safe."""

    def __init__(
        self,
        lab: str,
        params: dict[str, Any],
        world_size: int,
        out_dir: Path,
        *,
        card: Card | None = None,
        prediction: Prediction | None = None,
        runner: Runner | None = None,
        clock: Callable[[], float] = time.monotonic,
        timeout_s: float | None = None,
        on_finish: Callable[[LabOutcome, float], None] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        """`on_finish(outcome, took_s)` records the end (on the run's thread, before the run
        reports itself finished); `on_change()` says there is something new to read (a log
        line, progress, the end): called from the run's thread or the caller's, it must be
        thread-safe and quick."""
        self.lab = lab
        self.params = dict(params)
        self.world_size = world_size
        self.out_dir = out_dir
        self.card = card
        self.prediction = prediction
        self._runner = runner
        self._clock = clock
        self._timeout_s = timeout_s
        self._on_finish = on_finish
        self._on_change = on_change
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._lock = threading.Lock()
        self._progress = _Progress()
        self._thread: threading.Thread | None = None
        self._started: float | None = None
        self._ended: float | None = None
        self.outcome: LabOutcome | None = None

    # --- reading -----------------------------------------------------------------------------
    @property
    def status(self) -> str:
        """idle | running | cancelling | then the result's status (ok, failed, error, ...)."""
        if self.outcome is not None:
            return self.outcome.status
        if self._thread is None:
            return "idle"
        return "cancelling" if self._cancel.is_set() else "running"

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._finished.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def elapsed_s(self) -> float:
        if self._started is None:
            return 0.0
        end = self._ended if self._ended is not None else self._clock()
        return max(0.0, end - self._started)

    def progress(self) -> tuple[int, int, int | None, str]:
        """(units done, units total, latest training step or None, latest message)."""
        with self._lock:
            p = self._progress
            return p.done, p.total, p.step, p.message

    def drain_lines(self) -> list[str]:
        """Log lines collected since the last call (oldest first)."""
        with self._lock:
            lines, self._progress.lines = self._progress.lines, []
        return lines

    # --- acting ------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this run was already started")
        self._started = self._clock()
        self._log(f"start {self.lab} W={self.world_size} {_params_text(self.params)}".rstrip())
        if self._runner is None:  # the real launcher: its first start imports torch
            from drill.labs import warmup

            if warmup.warming():
                self._log(warmup.WARMING_NOTE)
            warmup.prewarm()  # tracks when it is ready (the run uses the same server)
        self._thread = threading.Thread(target=self._run, name=f"lab-{self.lab}", daemon=True)
        with _ACTIVE_LOCK:
            _ACTIVE.add(self)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the runner to kill the lab's whole process tree; returns at once."""
        if self.running and not self._cancel.is_set():
            self._log("cancelling: killing every process of the run")
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run finished (outcome scored, on_finish called); False on timeout."""
        if self._thread is None:
            return True
        return self._finished.wait(timeout)

    # --- internals ---------------------------------------------------------------------------
    def _log(self, message: str) -> None:
        with self._lock:
            self._progress.lines.append(f"[{self.elapsed_s:6.1f}s] {message}")
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def _on_progress(self, event: Any) -> None:
        message = str(getattr(event, "message", ""))
        found = _STEP.search(message)
        with self._lock:
            p = self._progress
            p.done = int(getattr(event, "done", p.done))
            p.total = int(getattr(event, "total", p.total))
            p.message = message
            if found:
                p.step = int(found.group(1))
        self._log(message)

    def _run(self) -> None:
        try:
            runner = self._runner or default_runner()
            result = runner(
                self.lab,
                self.params,
                self.world_size,
                self.out_dir,
                self._timeout_s,
                self._on_progress,
                self._cancel,
            )
        except Exception as error:  # shown as the run's error, never as a traceback
            result = {"status": "error", "error": {"message": f"{type(error).__name__}: {error}"}}
        if self._cancel.is_set() and result.get("status") in (None, "running"):
            result = {**result, "status": "cancelled"}
        outcome = score_outcome(self.card, as_lab_result(result, self.lab), self.prediction)
        self._ended = self._clock()
        error = f" ({outcome.error})" if outcome.error else ""
        # The whole run, start-up included: the time the panel and the labs list show (a
        # launch's own "finished in" line above counts its processes only).
        self._log(f"finished: {outcome.status}{error} · {self.elapsed_s:.1f} s in all")
        for check in outcome.result["checks"]:
            mark = "ok  " if check["passed"] else "FAIL"
            self._log(f"  check {mark} {check['name']}: {check['detail']}")
        self.outcome = outcome
        try:
            if self._on_finish is not None:
                self._on_finish(outcome, self.elapsed_s)
        except Exception as error:  # e.g. the history write failed: say so in the log
            self._log(f"could not record the run: {type(error).__name__}: {error}")
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE.discard(self)
            self._finished.set()
            self._changed()


def _params_text(params: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def active_runs() -> list[RunController]:
    with _ACTIVE_LOCK:
        return list(_ACTIVE)


def cancel_all(wait_s: float = 20.0) -> int:
    """Cancel every run of this process and wait for each to be killed and recorded; returns
    how many were running. The TUI calls it on quit; an atexit hook calls it as a backstop."""
    runs = active_runs()
    for run in runs:
        run.cancel()
    deadline = time.monotonic() + wait_s
    for run in runs:
        run.wait(max(0.0, deadline - time.monotonic()))
    return len(runs)


atexit.register(cancel_all)
