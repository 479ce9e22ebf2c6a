"""Lab panel: run a card's lab (or any lab) from the TUI and see what happened.

Before the run: the lab's summary, world size and params (editable, checked against their
types when the run starts: invalid input is refused with a message), and for a card with a
`predict` block a choice plus a certainty. During the run: a log fed in batches from a timer,
progress from the lab's progress events, elapsed time; `escape` cancels (the runner kills the
whole process group) and leaves once the run is recorded. After it: observed vs predicted,
which claims held, and a suggested rating (certainty-based marking, drill.lab_session) that
`enter` accepts and 1-4 override. The domain is drill.lab_session and drill.lab_history; this
screen only wires widgets to them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import (
    Footer,
    Input,
    Label,
    Log,
    OptionList,
    ProgressBar,
    RadioButton,
    RadioSet,
    Static,
)
from textual.widgets.option_list import Option

from drill.lab_session import (
    CERTAINTIES,
    RATING_NAMES,
    LabOutcome,
    LabRunController,
    Prediction,
    Runner,
)

if TYPE_CHECKING:
    from drill.deck_models import Card
    from drill.lab_history import LabHistory, LabRunRecord
    from drill.review_session import ReviewSession
    from storage.db import Database
    from trainer_lab.catalogue_types import LabSpec

POLL_S = 0.2  # how often the log and progress are brought up to date


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _describe_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def outcome_text(card: Card | None, outcome: LabOutcome, took_s: float) -> str:
    """The after-run summary (Rich markup): status, prediction vs observation, claims, rating."""
    result = outcome.result
    checks = result.get("checks") or []
    passed = sum(1 for c in checks if c.get("passed"))
    colour = {"ok": "green", "failed": "yellow"}.get(outcome.status, "red")
    lines = [f"[b {colour}]{outcome.status}[/] · checks {passed}/{len(checks)} · {took_s:.1f} s"]
    if outcome.error:
        lines.append(f"[red]{outcome.error}[/]")
    if card is not None and card.predict is not None:
        choices = card.predict.choices
        observed = (
            choices[outcome.observed_choice].text
            if outcome.observed_choice is not None
            else ("not decided: " + ", ".join(choices[i].text for i in outcome.holding))
            if outcome.holding
            else "not observed"
        )
        if outcome.prediction is not None:
            guess = choices[outcome.prediction.choice].text
            verdict = {True: "[green]right[/]", False: "[red]wrong[/]", None: "not scored"}[
                outcome.right
            ]
            lines.append(f"You predicted: {guess} ({outcome.prediction.certainty} certainty)")
            lines.append(f"Observed:      {observed}  → {verdict}")
        else:
            lines.append(f"Observed: {observed}")
    for claim in outcome.claims:
        mark = "[green]✓ held[/]" if claim.passed else "[red]✗ did not hold[/]"
        detail = "" if claim.passed else f" ({claim.detail})"
        lines.append(f"{mark}  {claim.claim}{detail}")
    if card is not None:
        if outcome.suggested_rating is not None:
            name = RATING_NAMES[outcome.suggested_rating]
            lines.append(
                f"Suggested rating: [b]{name}[/] ({outcome.suggested_rating}) · "
                "enter accepts · 1-4 rate otherwise"
            )
        else:
            lines.append("No suggested rating · 1-4 rate the card · escape leaves unrated")
    return "\n".join(lines)


class LabPanelScreen(Screen[int | None]):
    """Dismisses with the rating given to the card (None when it was not rated)."""

    DEFAULT_CSS = """
    LabPanelScreen #lab-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    LabPanelScreen #lab-body { height: 1fr; padding: 0 1; }
    LabPanelScreen .param-row { height: 1; margin-top: 1; }
    LabPanelScreen .param-row Label { width: 16; }
    LabPanelScreen .param-row Input { width: 24; height: 1; border: none; padding: 0 1; }
    LabPanelScreen .param-help { width: 1fr; height: 1; padding: 0 0 0 1; color: $text-muted; }
    LabPanelScreen #run-config { margin-top: 1; }
    LabPanelScreen #param-error { color: $error; height: auto; }
    LabPanelScreen #predict-ask { margin-top: 1; text-style: bold; }
    LabPanelScreen RadioSet { height: auto; }
    LabPanelScreen #certainty { layout: horizontal; }
    LabPanelScreen #run-status { margin-top: 1; }
    LabPanelScreen #lab-log { height: 10; border: round $primary-muted; }
    LabPanelScreen #outcome { margin-top: 1; height: auto; }
    LabPanelScreen #past-runs { height: auto; max-height: 6; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run"),
        Binding("escape", "leave", "Cancel / leave"),
        Binding("enter", "accept", "Accept rating", show=False),
        Binding("1", "rate(1)", "Again", show=False),
        Binding("2", "rate(2)", "Hard", show=False),
        Binding("3", "rate(3)", "Good", show=False),
        Binding("4", "rate(4)", "Easy", show=False),
        Binding("v", "results", "Results"),
    ]

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
        now: Callable[[], datetime] = _utc_now,
        runs_root: Path | None = None,
        timeout_s: float | None = None,
    ) -> None:
        from trainer_lab.catalogue import get_lab

        super().__init__()
        name = lab or (card.lab.run if card is not None and card.lab is not None else None)
        if name is None:
            raise ValueError("a lab panel needs a card with a lab block or a lab name")
        self.spec: LabSpec = get_lab(name)
        self.card = card
        self.deck_id = deck_id
        self.db = db
        self.session = session
        self.runner = runner
        self.clock = clock
        self.now = now
        self.runs_root = runs_root
        self.timeout_s = timeout_s
        self.controller: LabRunController | None = None
        self.run_id: int | None = None
        self.rated: int | None = None
        self._timer: Timer | None = None
        self._leave_when_done = False
        self._history: LabHistory | None = None
        self._past: list[LabRunRecord] = []

    # --- layout ------------------------------------------------------------------------------
    def _initial_params(self) -> dict[str, Any]:
        given = dict(self.card.lab.params) if self.card and self.card.lab else {}
        return {p.name: given.get(p.name, p.default) for p in self.spec.params}

    def _initial_world(self) -> int:
        if self.card is not None and self.card.lab is not None and self.card.lab.world_size:
            return self.card.lab.world_size
        return self.spec.default_world_size

    def compose(self) -> ComposeResult:
        card = f" · card {self.card.id}" if self.card is not None else ""
        yield Static(f"Lab {self.spec.name}{card}", id="lab-title")
        with VerticalScroll(id="lab-body"):
            yield Static(self.spec.summary, id="lab-summary")
            with Horizontal(classes="param-row"):
                yield Label("world size")
                yield Input(str(self._initial_world()), id="param-world", classes="param")
                yield Static(
                    f"ranks, {self.spec.min_world_size}..{self.spec.max_world_size}",
                    classes="param-help",
                )
            for index, (name, value) in enumerate(self._initial_params().items()):
                param = self.spec.param(name)
                with Horizontal(classes="param-row"):
                    yield Label(name)
                    yield Input(_describe_value(value), id=f"param-{index}", classes="param")
                    yield Static(f"{param.describe()} · {param.help}", classes="param-help")
            yield Static("", id="param-error")
            yield Static("", id="run-config")
            if self.card is not None and self.card.predict is not None:
                yield Static(f"Predict: {self.card.predict.ask}", id="predict-ask")
                with RadioSet(id="predict-choice"):
                    for choice in self.card.predict.choices:
                        yield RadioButton(choice.text)
                with RadioSet(id="certainty"):
                    for certainty in CERTAINTIES:
                        yield RadioButton(certainty)
            yield Static(
                "tab: next field · arrows + enter: choose · ctrl+r: run · escape: leave",
                id="run-status",
            )
            yield ProgressBar(id="run-progress", show_eta=False)
            yield Log(id="lab-log", max_lines=2000)
            yield Static("", id="outcome")
            yield OptionList(id="past-runs")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#lab-log", Log).display = False
        self.query_one("#outcome", Static).display = False
        self.query_one("#run-config", Static).display = False
        self._load_past_runs()
        self.query_one("#param-world", Input).focus()

    def _history_or_none(self) -> LabHistory | None:
        if self._history is None and self.db is not None:
            from drill.lab_history import LabHistory

            self._history = LabHistory(self.db)
        return self._history

    def _load_past_runs(self) -> None:
        history = self._history_or_none()
        past = self.query_one("#past-runs", OptionList)
        past.clear_options()
        self._past = []
        if history is not None:
            if self.card is not None:
                self._past = history.runs(card_id=self.card.id, limit=20)
            else:
                self._past = history.runs(lab=self.spec.name, limit=20)
            self._past = [r for r in self._past if r.id != self.run_id]
        past.add_options([Option(f"past run · {r.short()}", id=f"run-{r.id}") for r in self._past])
        past.display = bool(self._past)

    # --- reading the form ----------------------------------------------------------------------
    def _read_form(self) -> tuple[int, dict[str, Any], Prediction | None]:
        """World size, typed params and prediction; ParamError/ValueError with a user message."""
        from trainer_lab.catalogue import check_world_size
        from trainer_lab.catalogue_types import ParamError

        text = self.query_one("#param-world", Input).value.strip()
        try:
            world = int(text)
        except ValueError:
            raise ParamError(f"world size: {text!r} is not a whole number") from None
        check_world_size(self.spec, world)
        params: dict[str, Any] = {}
        for index, param in enumerate(self.spec.params):
            raw = self.query_one(f"#param-{index}", Input).value
            params[param.name] = param.parse(raw.strip())
        prediction = None
        if self.card is not None and self.card.predict is not None:
            choice = self.query_one("#predict-choice", RadioSet).pressed_index
            certainty = self.query_one("#certainty", RadioSet).pressed_index
            if choice < 0 or certainty < 0:
                raise ValueError("pick your prediction and how sure you are before the run")
            prediction = Prediction(choice, CERTAINTIES[certainty])
        return world, params, prediction

    def _lock_form(self, world: int, params: dict[str, Any], prediction: Prediction | None) -> None:
        """Replace the form by one line of what runs (and what was predicted): the log and
        the outcome get the room."""
        for widget in self.query(".param"):
            widget.disabled = True
        for radio in self.query(RadioSet):
            radio.disabled = True
        for hidden in (
            *self.query(".param-row"),
            *self.query(RadioSet),
            *self.query("#predict-ask"),
        ):
            hidden.display = False
        text = f"W={world} " + " ".join(f"{k}={_describe_value(v)}" for k, v in params.items())
        if prediction is not None and self.card is not None and self.card.predict is not None:
            guess = self.card.predict.choices[prediction.choice].text
            text += f"\nPredicted: {guess} ({prediction.certainty} certainty)"
        config = self.query_one("#run-config", Static)
        config.update(text)
        config.display = True

    # --- actions -----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        finished = self.controller is not None and self.controller.finished
        if action == "run":
            return self.controller is None
        if action in ("accept", "rate"):
            return finished and self.card is not None and self.rated is None
        if action == "results":
            return finished
        return True

    def action_run(self) -> None:
        from trainer_lab.catalogue_types import ParamError

        if self.controller is not None:
            return
        error_box = self.query_one("#param-error", Static)
        try:
            world, params, prediction = self._read_form()
        except (ParamError, ValueError) as error:
            error_box.update(f"Not started: {error}")
            self.notify(str(error), title="Not started", severity="error", timeout=6)
            return
        error_box.update("")
        started = self.now()
        out_dir = self._run_dir(started)
        history = self._history_or_none()
        if history is not None:
            predicted = None
            if prediction is not None and self.card is not None and self.card.predict:
                predicted = self.card.predict.choices[prediction.choice].text
            self.run_id = history.start(
                self.spec.name, params, world, out_dir, started,
                card_id=self.card.id if self.card else None, deck_id=self.deck_id,
                predicted=predicted, prediction=prediction,
            )  # fmt: skip
        self.controller = LabRunController(
            self.spec.name,
            params,
            world,
            out_dir,
            card=self.card,
            prediction=prediction,
            runner=self.runner,
            clock=self.clock,
            timeout_s=self.timeout_s,
            on_finish=self._record_finish,
        )
        self._lock_form(world, params, prediction)
        self.query_one("#lab-log", Log).display = True
        bar = self.query_one("#run-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.controller.start()
        self._timer = self.set_interval(POLL_S, self._poll)
        self._poll()
        self.refresh_bindings()

    def _run_dir(self, started: datetime) -> Path:
        from drill.paths import new_run_dir, runs_dir

        return new_run_dir(self.runs_root or runs_dir(), self.spec.name, started)

    def _record_finish(self, outcome: LabOutcome, took_s: float) -> None:
        # Runs on the runner's thread, before the controller reports itself finished.
        history = self._history
        if history is not None and self.run_id is not None:
            history.finish(self.run_id, outcome, took_s)

    def _poll(self) -> None:
        controller = self.controller
        if controller is None:
            return
        lines = controller.drain_lines()
        if lines:
            self.query_one("#lab-log", Log).write_lines(lines)
        done, total, step, _message = controller.progress()
        bar = self.query_one("#run-progress", ProgressBar)
        if total:
            bar.update(total=total, progress=done)
        step_text = f" · step {step}" if step is not None else ""
        units = f" · {done}/{total}" if total else ""
        status = controller.status
        hint = " · escape: cancel" if controller.running else ""
        self.query_one("#run-status", Static).update(
            f"{status}{units}{step_text} · {controller.elapsed_s:.1f} s{hint}"
        )
        if controller.finished:
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._show_outcome()

    def _show_outcome(self) -> None:
        controller = self.controller
        assert controller is not None and controller.outcome is not None
        if self._leave_when_done:
            self.dismiss(None)
            return
        outcome = controller.outcome
        box = self.query_one("#outcome", Static)
        box.update(outcome_text(self.card, outcome, controller.elapsed_s))
        box.display = True
        bar = self.query_one("#run-progress", ProgressBar)
        if bar.total is None:  # the lab reported no progress units: show it complete
            bar.update(total=1, progress=1)
        self._load_past_runs()
        self.query_one("#lab-log", Log).focus()  # off the disabled form; enter accepts
        self.query_one("#lab-body", VerticalScroll).scroll_end(animate=False)
        self.refresh_bindings()

    def action_leave(self) -> None:
        controller = self.controller
        if controller is not None and controller.running:
            self._leave_when_done = True
            controller.cancel()
            self._poll()
            return
        self.dismiss(self.rated)

    def action_accept(self) -> None:
        outcome = self.controller.outcome if self.controller else None
        if outcome is not None and outcome.suggested_rating is not None:
            self.action_rate(outcome.suggested_rating)

    def action_rate(self, rating: int) -> None:
        card = self.card
        if card is None or self.rated is not None or not self.check_action("rate", ()):
            return
        if not self._save_rating(card, rating):
            return
        self.rated = rating
        history = self._history_or_none()
        if history is not None and self.run_id is not None:
            history.set_rating(self.run_id, rating)
        self.notify(f"Rated {RATING_NAMES[rating]}", timeout=3)
        self.dismiss(rating)

    def _save_rating(self, card: Card, rating: int) -> bool:
        """Through the review session when it shows this card, else straight to the schedule."""
        import sqlite3

        from sqlalchemy.exc import SQLAlchemyError

        session = self.session
        try:
            if session is not None and session.current and session.current.card.id == card.id:
                session.rate(rating, 0)
            elif self.db is not None and self.deck_id is not None:
                from drill.scheduler import rate_card

                rate_card(
                    self.db,
                    card.id,
                    self.deck_id,
                    rating,
                    content_hash=card.content_hash(),
                    now=self.now(),
                )
            else:
                self.notify("No database: the rating was not saved.", severity="error")
                return False
        except (SQLAlchemyError, sqlite3.Error) as error:
            detail = str(getattr(error, "orig", None) or error).splitlines()[0]
            self.notify(f"Not saved: {detail}. Try again.", severity="error", timeout=8)
            return False
        return True

    def action_results(self) -> None:
        controller = self.controller
        if controller is None or controller.outcome is None:
            return
        from drill.tui.lab_results import LabResultsScreen

        self.app.push_screen(LabResultsScreen(controller.outcome.result, controller.out_dir))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        record = next((r for r in self._past if f"run-{r.id}" == option_id), None)
        if record is not None:
            open_run_record(self.app, record)

    def on_unmount(self) -> None:
        # Leaving or quitting during a run: kill the run and wait until it is recorded.
        controller = self.controller
        if controller is not None and controller.running:
            controller.cancel()
            controller.wait(30)


def open_run_record(app: App[Any], record: LabRunRecord) -> None:
    """Reopen a stored run in the results view (its run dir may be gone: say so)."""
    from drill.tui.lab_results import LabResultsScreen

    result = record.load_result()
    if result is None:
        app.notify(f"The run dir {record.run_dir} has no result.json any more.", timeout=6)
        result = {"lab": record.lab, "status": record.status, "params": record.params}
    title = f"Results · {record.lab} · {record.short()}"
    app.push_screen(LabResultsScreen(result, record.run_dir, title))


def open_lab_panel(
    app: App[Any],
    card: Any,
    deck_id: str | None,
    session: ReviewSession | None = None,
    callback: Callable[[int | None], Any] | None = None,
    **panel_options: Any,
) -> bool:
    """Push the lab panel for `card` (a deck Card, or anything with the `id` of one, such as
    the review screen's first-paint record). False (with a notice) when it cannot open.
    `callback` gets the rating given in the panel (None: not rated); `panel_options` go to
    LabPanelScreen (runner, runs_root, timeout_s: tests)."""
    from drill.deck_models import Card

    heavy = getattr(getattr(app, "backend", None), "heavy", None)
    if not isinstance(card, Card):
        found = heavy.decks.card(getattr(card, "id", "")) if heavy is not None else None
        if found is None:
            app.notify("Still loading the decks; try again in a moment.", timeout=3)
            return False
        card = found
    if card.lab is None:
        app.notify("This card has no lab.", timeout=3)
        return False
    db = heavy.db if heavy is not None else None
    app.push_screen(
        LabPanelScreen(card, deck_id, db=db, session=session, **panel_options), callback
    )
    return True
