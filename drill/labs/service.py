"""One lab run for a card (or for no card), as the lab panel drives it, without a screen.

`LabRunService` owns the workflow the panel used to carry: the lab's form (catalogue params,
world size), checking what the user typed, recording the run (drill.runs.recorder), starting the
`RunController`, reporting progress, recording the end, scoring against the card's
predict/expect (drill.labs.controller.score_outcome) and rating the card (through the review
session it was opened from, else straight to the scheduler). Database failures
never raise out of it: each call that touches the database returns a `Done` whose `notice` the
screen shows (drill.guarded_db). Nothing here blocks: `wait_stopped()` is async.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill import guarded_db
from drill.errors import DrillError
from drill.guarded_db import Done
from drill.labs.controller import CERTAINTIES, LabOutcome, Prediction, RunController, Runner
from drill.labs.debug_params import is_debug_param
from drill.runs.log import LAB
from drill.runs.recorder import RunRecorder
from drill.times import utc_now

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.models import Card
    from drill.labs.runs import LabRuns, RunRecord
    from drill.review.outside import CardChange
    from drill.review.session import ReviewSession

NO_DATABASE = "No database: the rating was not saved."


class FormError(ValueError):
    """What the user typed cannot start a run; str() is the message to show."""


class UnknownLab(DrillError):
    """The card names a lab the catalogue does not have."""


def describe_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class ParamField:
    """One line of the form: a param's name, its starting text and its help. `advanced`: a
    sabotage or debug switch (it makes the lab's checks fail on purpose), kept out of a
    learner's way until asked for."""

    name: str
    text: str
    help: str
    advanced: bool = False


@dataclass(frozen=True)
class RunRequest:
    world_size: int
    params: dict[str, Any]
    prediction: Prediction | None

    def describe(self) -> str:
        return f"W={self.world_size} " + " ".join(
            f"{k}={describe_value(v)}" for k, v in self.params.items()
        )


@dataclass(frozen=True)
class RunProgress:
    """Where the run stands, and the log lines since the last look."""

    lines: list[str]
    done: int
    total: int
    step: int | None
    status: str
    elapsed_s: float
    running: bool
    finished: bool


class LabRunService:
    """Drive one run of `lab` (default: the card's) and rate the card with its outcome."""

    def __init__(
        self,
        card: Card | None,
        deck_id: str | None,
        *,
        lab: str | None = None,
        db: Database | None = None,
        session: ReviewSession | None = None,
        runner: Runner | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
        runs_root: Path | None = None,
        timeout_s: float | None = None,
        shown_at: float | None = None,
    ) -> None:
        """`shown_at`: the `clock()` reading when the card was displayed (the review screen's),
        so a rating given here logs the time from the card's display to the rating."""
        from trainer_lab.catalogue import UnknownLabError, get_lab

        name = lab or (card.lab.run if card is not None and card.lab is not None else None)
        if name is None:
            raise ValueError("a lab run needs a card with a lab block or a lab name")
        try:
            self.spec = get_lab(name)
        except UnknownLabError as error:
            raise UnknownLab(str(error)) from None
        self.card = card
        self.deck_id = deck_id
        self.db = db
        self.session = session
        self.runner = runner
        self.clock = clock
        self.now = now
        self.runs_root = runs_root
        self.timeout_s = timeout_s
        self.shown_at = clock() if shown_at is None else shown_at
        self.controller: RunController | None = None
        self.run_id: int | None = None
        self.rated: int | None = None
        self.change: CardChange | None = None  # what the rating did to the card
        self.leech_notice: str | None = None  # set when this rating, outside review, made a leech
        self.finish_notice: str | None = None  # set when the end of the run was not recorded
        self._lab_runs: LabRuns | None = None
        self.recorder = RunRecorder(LAB, db=db, open_db=None, now=now, clock=clock)

    # --- the form ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def summary(self) -> str:
        return self.spec.summary

    @property
    def world_help(self) -> str:
        return f"ranks, {self.spec.min_world_size}..{self.spec.max_world_size}"

    def initial_world(self) -> int:
        if self.card is not None and self.card.lab is not None and self.card.lab.world_size:
            return self.card.lab.world_size
        return self.spec.default_world_size

    def fields(self) -> list[ParamField]:
        """Every param of the lab, starting from the card's value or the default."""
        given = dict(self.card.lab.params) if self.card and self.card.lab else {}
        return [
            ParamField(p.name, describe_value(given.get(p.name, p.default)),
                       f"{p.describe()} · {p.help}", is_debug_param(p))
            for p in self.spec.params
        ]  # fmt: skip

    @property
    def predicts(self) -> bool:
        return self.card is not None and self.card.predict is not None

    def parse(
        self,
        world_text: str,
        param_texts: Sequence[str],
        choice: int | None = None,
        certainty: int | None = None,
    ) -> RunRequest:
        """The typed run; FormError with the user's message when it cannot run. `choice` and
        `certainty` are indices (None or < 0: not picked)."""
        from trainer_lab.catalogue import check_world_size
        from trainer_lab.catalogue_types import ParamError

        text = world_text.strip()
        try:
            world = int(text)
        except ValueError:
            raise FormError(f"world size: {text!r} is not a whole number") from None
        try:
            check_world_size(self.spec, world)
            params = {
                param.name: param.parse(raw.strip())
                for param, raw in zip(self.spec.params, param_texts, strict=True)
            }
        except ParamError as error:
            raise FormError(str(error)) from None
        prediction = None
        if self.predicts:
            if choice is None or certainty is None or choice < 0 or certainty < 0:
                raise FormError("pick your prediction and how sure you are before the run")
            prediction = Prediction(choice, CERTAINTIES[certainty])
        return RunRequest(world, params, prediction)

    def predicted_text(self, prediction: Prediction | None) -> str | None:
        if prediction is None or self.card is None or self.card.predict is None:
            return None
        return self.card.predict.choices[prediction.choice].text

    # --- the run -------------------------------------------------------------------------
    def start(
        self, request: RunRequest, on_change: Callable[[], None] | None = None
    ) -> Done[RunController]:
        """Write the run-log row and start the run. The run starts even when the row cannot
        be written; the notice then says the run will not be kept. `on_change()` is called
        whenever `progress()` has something new (RunController's `on_change`: thread-safe)."""
        if self.controller is not None:
            raise RuntimeError("this service already started its run")
        started = self.now()
        out_dir = self._run_dir(started)
        notice = None
        if self.db is not None:
            not_recorded = self.recorder.start(
                self.spec.name, request.params, request.world_size, out_dir, started,
                card_id=self.card.id if self.card else None, deck_id=self.deck_id,
                predicted=self.predicted_text(request.prediction),
                certainty=request.prediction.certainty if request.prediction else None,
            )  # fmt: skip
            self.run_id = self.recorder.run_id
            if not_recorded is not None:
                notice = f"{not_recorded} (the run is not kept in the history)"
        self.controller = RunController(
            self.spec.name,
            request.params,
            request.world_size,
            out_dir,
            card=self.card,
            prediction=request.prediction,
            runner=self.runner,
            clock=self.clock,
            timeout_s=self.timeout_s,
            on_finish=self._record_finish,
            on_change=on_change,
        )
        self.controller.start()
        return Done(self.controller, notice)

    def _run_dir(self, started: datetime) -> Path:
        from drill.paths import new_run_dir, runs_dir

        root = self.runs_root or runs_dir()
        try:
            return new_run_dir(root, self.spec.name, started)
        except OSError:  # the run starts anyway and its result says why the folder is unusable
            return root / f"{self.spec.name}-{started:%Y%m%d-%H%M%S}"

    def _record_finish(self, outcome: LabOutcome, took_s: float) -> None:
        # Runs on the runner's thread, before the controller reports itself finished.
        from drill.labs.runs import summarize

        self.finish_notice = self.recorder.finish(
            outcome.status, summarize(outcome), took_s,
            prediction_right=outcome.right, suggested_rating=outcome.suggested_rating,
        )  # fmt: skip

    def progress(self, *, lines: bool = True) -> RunProgress | None:
        """Where the run stands and the log lines since the last call (`lines=False`: the
        lines are left for the next call); None before the run started."""
        controller = self.controller
        if controller is None:
            return None
        done, total, step, _message = controller.progress()
        return RunProgress(
            controller.drain_lines() if lines else [],
            done,
            total,
            step,
            controller.status,
            controller.elapsed_s,
            controller.running,
            controller.finished,
        )

    @property
    def running(self) -> bool:
        return self.controller is not None and self.controller.running

    @property
    def finished(self) -> bool:
        return self.controller is not None and self.controller.finished

    @property
    def outcome(self) -> LabOutcome | None:
        return self.controller.outcome if self.controller is not None else None

    def cancel(self) -> None:
        """Ask the run to stop (its whole process tree is killed); returns at once."""
        if self.controller is not None:
            self.controller.cancel()

    async def wait_stopped(self, timeout_s: float = 30.0) -> bool:
        """Cancel a running run and wait, off the event loop, until it is killed and recorded."""
        controller = self.controller
        if controller is None or not controller.running:
            return True
        controller.cancel()
        return await asyncio.to_thread(controller.wait, timeout_s)

    def prewarm(self) -> None:
        """Start the warm launcher in the background (the real runner only), so that the run
        does not wait for it to import torch."""
        if self.runner is None:
            from drill.labs.warmup import prewarm

            prewarm()

    # --- rating --------------------------------------------------------------------------
    @property
    def can_rate(self) -> bool:
        return self.card is not None and self.finished and self.rated is None

    def rate(self, rating: int) -> Done[int]:
        """Save the card's rating; the Done's notice says why it was not saved."""
        card = self.card
        if card is None or not self.can_rate:
            return Done(None, "Nothing to rate.")
        session = self.session
        duration_ms = max(0, int((self.clock() - self.shown_at) * 1000))
        if session is not None and self.deck_id is not None:
            # This card, whatever the session shows by now; its queue entry goes with it.
            deck_id = self.deck_id
            saved = guarded_db.write(
                lambda: session.rate_card(card.id, deck_id, rating, duration_ms)
            )
        elif self.db is not None and self.deck_id is not None:
            # outside review (the labs list, the browser): the rule of drill.review.outside
            from drill.review.outside import rate_from_outside

            db, deck_id = self.db, self.deck_id
            saved = guarded_db.write(
                lambda: rate_from_outside(db, card.id, deck_id, rating,
                                          content_hash=card.content_hash(), now=self.now(),
                                          duration_ms=duration_ms)
            )  # fmt: skip
        else:
            return Done(None, NO_DATABASE)
        if not saved.ok:
            return Done(None, saved.notice)
        self.change = saved.value
        written = saved.value.rated if saved.value is not None else None
        if session is None and written is not None and written.leech_hit:
            from drill.review.scheduler import leech_notice

            self.leech_notice = leech_notice(card.id, written.after)
        self.rated = rating
        lab_runs = self.lab_runs()
        if lab_runs is not None and self.run_id is not None:
            run_id = self.run_id
            guarded_db.write(
                lambda: lab_runs.set_rating(run_id, rating)
            )  # the review is what counts
        return Done(rating)

    # --- the run log -----------------------------------------------------------------------
    def lab_runs(self) -> LabRuns | None:
        if self._lab_runs is None and self.db is not None:
            from drill.labs.runs import LabRuns

            self._lab_runs = LabRuns(self.db)
        return self._lab_runs

    def past_runs(self, limit: int = 20) -> Done[list[RunRecord]]:
        """This card's runs (or this lab's, without a card), newest first, this one left out."""
        lab_runs = self.lab_runs()
        if lab_runs is None:
            return Done([])
        if self.card is not None:
            card_id = self.card.id
            found = guarded_db.read(lambda: lab_runs.runs(card_id=card_id, limit=limit))
        else:
            found = guarded_db.read(lambda: lab_runs.runs(lab=self.spec.name, limit=limit))
        if not found.ok:
            return Done([], found.notice)
        return Done([r for r in found.value or [] if r.id != self.run_id])
