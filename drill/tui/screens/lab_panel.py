"""Lab panel: run a card's lab (or any lab) from the TUI and see what happened.

Before the run: the lab's summary, world size and params (editable, checked when the run
starts: invalid input is refused with a message; the sabotage and debug switches only after
ctrl+t), and for a card with a `predict` block a choice plus a certainty, focused first; there
the lab's summary, which often states the answer, shows only once the prediction is locked in,
and the params (their help can state it too) only after ctrl+t.
During the run: a log fed in batches (the launcher's lines and what rank 0 prints, as it
prints it), progress from the lab's progress events, elapsed time. The run's thread posts the
screen a `RunChanged` message when there is something new (at most one waits at a time), so
the log and the end arrive as they happen; a clock only ticks the elapsed time. `escape`
cancels (the runner kills the whole process group) and stays on the partial log with the
"cancelled" status; a second `escape` leaves (once the run is recorded).
After it: observed vs predicted, which claims held, and a suggested rating (certainty-based
marking, drill.labs.controller) that `enter` accepts and 1-4 override. The workflow is
drill.labs.service.LabRunService; this screen renders it and forwards keys, and never waits on
the run's thread.

Longer than the ~350-line guideline: the form, the live run and the outcome are three states of
one screen that share its widgets; every decision is in the service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import (
    Footer,
    Input,
    Label,
    OptionList,
    ProgressBar,
    RadioButton,
    RadioSet,
    RichLog,
    Static,
)
from textual.widgets.option_list import Option

from drill.errors import DrillError
from drill.labs.controller import CERTAINTIES
from drill.labs.service import FormError, LabRunService, RunRequest
from drill.review.ratings import RATING_NAMES
from drill.text import printable
from drill.tui.plain import shown
from drill.tui.rated import announce_rated
from drill.tui.screens.lab_outcome import outcome_text

if TYPE_CHECKING:
    from drill.decks.models import Card
    from drill.labs.controller import RunController
    from drill.labs.runs import RunRecord
    from drill.review.session import ReviewSession
    from drill.services import Services

ELAPSED_TICK_S = 1.0  # the elapsed time shown moves on between the run's own messages


class ChoiceButton(RadioButton):
    """A radio button whose chosen state shows in its glyph (● chosen, ○ not), not only in
    its colour."""

    @property  # type: ignore[override]
    def BUTTON_INNER(self) -> str:  # Textual's class attribute, read per render
        return "●" if self.value else "○"


class LabPanelScreen(Screen[int | None]):
    """Dismisses with the rating given to the card (None when it was not rated)."""

    DEFAULT_CSS = """
    LabPanelScreen #lab-title { height: 1; padding: 0 1; background: $primary; text-style: bold; }
    LabPanelScreen #lab-body { height: 1fr; padding: 0 1; }
    LabPanelScreen .param-row { height: auto; margin-top: 1; }
    LabPanelScreen .param-row Label { width: 16; text-wrap: nowrap; }
    LabPanelScreen .advanced { display: none; }
    LabPanelScreen.show-advanced .advanced { display: block; }
    LabPanelScreen .param-row Input { width: 24; height: 1; border: none; padding: 0 1; }
    LabPanelScreen .param-help { width: 1fr; height: auto; padding: 0 0 0 1; color: $text-muted; }
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
        Binding("ctrl+t", "advanced", "Advanced"),
    ]

    def __init__(self, service: LabRunService) -> None:
        """`service`: the run to drive (drill.services.lab_run or Services.lab_run)."""
        super().__init__()
        self.service = service
        self._timer: Timer | None = None  # ticks the elapsed time during the run
        self._change_posted = False  # a RunChanged is on its way: the next one would add nothing
        self._outcome_shown = False
        self._leave_when_done = False
        self._cancel_pressed = False
        self._past: list[RunRecord] = []

    class RunChanged(Message):
        """The run has something new to show: log lines, progress, or its end."""

    @property
    def card(self) -> Card | None:
        return self.service.card

    @property
    def controller(self) -> RunController | None:
        return self.service.controller

    @property
    def rated(self) -> int | None:
        return self.service.rated

    # --- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        service = self.service
        card = f" · card {self.card.id}" if self.card is not None else ""
        yield Static(shown(f"Lab {service.name}{card}"), id="lab-title")
        with VerticalScroll(id="lab-body"):
            summary = Static(shown(service.summary), id="lab-summary")
            summary.display = not service.predicts  # it may state the answer: after the run
            yield summary
            with Horizontal(classes="param-row"):
                yield Label("world size")
                yield Input(str(service.initial_world()), id="param-world", classes="param")
                yield Static(shown(service.world_help), classes="param-help")
            for index, field in enumerate(service.fields()):
                # On a card that asks for a prediction the lab's settings wait too: their help
                # can state what the prediction asks about (the card's values are used).
                advanced = field.advanced or service.predicts
                with Horizontal(classes="param-row advanced" if advanced else "param-row"):
                    yield Label(shown(field.name))
                    yield Input(printable(field.text), id=f"param-{index}", classes="param")
                    yield Static(shown(field.help), classes="param-help")
            yield Static("", id="param-error")
            yield Static("", id="run-config")
            if self.card is not None and self.card.predict is not None:
                yield Static(shown(f"Predict: {self.card.predict.ask}"), id="predict-ask")
                with RadioSet(id="predict-choice"):
                    for choice in self.card.predict.choices:
                        yield ChoiceButton(shown(choice.text))
                with RadioSet(id="certainty"):
                    for certainty in CERTAINTIES:
                        yield ChoiceButton(certainty)
            yield Static(
                "tab: next field · arrows + enter: choose · ctrl+r: run · escape: leave",
                id="run-status",
            )
            yield ProgressBar(id="run-progress", show_eta=False)
            # RichLog wraps long lines (Log does not); lines are written as Text (_show_progress)
            yield RichLog(
                id="lab-log", max_lines=2000, wrap=True, markup=False, highlight=False, min_width=1
            )
            yield Static("", id="outcome")
            yield OptionList(id="past-runs")
        yield Footer()

    def on_mount(self) -> None:
        if not self.app.is_headless:  # tests drive fake runners: no torch process for them
            self.service.prewarm()  # the launcher imports torch while the user reads
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#lab-log", RichLog).display = False
        self.query_one("#outcome", Static).display = False
        self.query_one("#run-config", Static).display = False
        self._load_past_runs()
        longest = max([len("world size"), *(len(f.name) for f in self.service.fields())])
        for label in self.query(".param-row Label"):
            label.styles.width = max(16, longest + 1)  # never wraps inside a name
        if self.service.predicts:  # predict first: the form below is for afterwards
            self.query_one("#predict-choice", RadioSet).focus()
        else:
            self.query_one("#param-world", Input).focus()

    def action_advanced(self) -> None:
        """Show or hide the sabotage and debug switches (they make the checks fail)."""
        self.toggle_class("show-advanced")

    def _load_past_runs(self) -> None:
        past = self.query_one("#past-runs", OptionList)
        past.clear_options()
        found = self.service.past_runs()
        if found.notice:
            self.notify(found.notice, severity="error", timeout=8)
        self._past = found.value or []
        options = [Option(shown(f"past run · {r.short()}"), id=f"run-{r.id}") for r in self._past]
        past.add_options(options)
        past.display = bool(self._past)

    # --- reading the form ----------------------------------------------------------------------
    def _read_form(self) -> RunRequest:
        """The typed run; FormError with a user message."""
        world = self.query_one("#param-world", Input).value
        texts = [
            self.query_one(f"#param-{index}", Input).value
            for index in range(len(self.service.fields()))
        ]
        choice = certainty = None
        if self.service.predicts:
            choice = self.query_one("#predict-choice", RadioSet).pressed_index
            certainty = self.query_one("#certainty", RadioSet).pressed_index
        return self.service.parse(world, texts, choice, certainty)

    def _lock_form(self, request: RunRequest) -> None:
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
        text = request.describe()
        guess = self.service.predicted_text(request.prediction)
        if guess is not None and request.prediction is not None:
            text += f"\nPredicted: {guess} ({request.prediction.certainty} certainty)"
        config = self.query_one("#run-config", Static)
        config.update(shown(text))
        config.display = True
        self.query_one("#lab-summary", Static).display = True  # the prediction is made

    # --- actions -----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return self.controller is None
        if action in ("accept", "rate"):
            return self.service.can_rate
        if action == "results":
            return self.service.finished
        if action == "advanced":
            fields = self.service.fields()
            hidden = bool(fields) if self.service.predicts else any(f.advanced for f in fields)
            return self.controller is None and hidden
        return True

    def action_run(self) -> None:
        if self.controller is not None:
            return
        error_box = self.query_one("#param-error", Static)
        try:
            request = self._read_form()
        except FormError as error:
            error_box.update(shown(f"Not started: {error}"))
            self.notify(str(error), title="Not started", severity="error", timeout=6)
            return
        error_box.update("")
        started = self.service.start(request, on_change=self._post_run_changed)
        if started.notice:
            self.notify(started.notice, severity="error", timeout=8)
        self._lock_form(request)
        self.query_one("#lab-log", RichLog).display = True
        bar = self.query_one("#run-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self._timer = self.set_interval(ELAPSED_TICK_S, self._tick_elapsed)
        self._show_progress()
        self.refresh_bindings()

    def _post_run_changed(self) -> None:
        """Called by the run (from its thread): one message at a time is enough, since its
        handler reads everything new. Cleared before that read, so nothing is left behind."""
        if not self._change_posted:
            self._change_posted = True
            self.post_message(self.RunChanged())

    def on_lab_panel_screen_run_changed(self, _message: RunChanged) -> None:
        self._change_posted = False
        self._show_progress()

    def _tick_elapsed(self) -> None:
        if not self._outcome_shown:
            self._show_progress(lines=False)

    def _show_progress(self, *, lines: bool = True) -> None:
        progress = self.service.progress(lines=lines)
        if progress is None or self._outcome_shown:
            return
        if progress.lines:
            log = self.query_one("#lab-log", RichLog)
            for line in progress.lines:
                log.write(shown(line))
        bar = self.query_one("#run-progress", ProgressBar)
        if progress.total:
            bar.update(total=progress.total, progress=progress.done)
        step_text = f" · step {progress.step}" if progress.step is not None else ""
        units = f" · {progress.done}/{progress.total}" if progress.total else ""
        hint = ""
        if progress.running:
            hint = " · escape: leave" if self._cancel_pressed else " · escape: cancel"
        self.query_one("#run-status", Static).update(
            shown(f"{progress.status}{units}{step_text} · {progress.elapsed_s:.1f} s{hint}")
        )
        if progress.finished and lines:  # the last lines are written: the outcome follows
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._outcome_shown = True
            self._show_outcome(progress.elapsed_s)

    def _show_outcome(self, took_s: float) -> None:
        outcome = self.service.outcome
        assert outcome is not None
        if self.service.finish_notice:
            self.notify(self.service.finish_notice, severity="error", timeout=8)
        if self._leave_when_done:
            self.dismiss(None)
            return
        box = self.query_one("#outcome", Static)
        box.update(outcome_text(self.card, outcome, took_s))
        box.display = True
        bar = self.query_one("#run-progress", ProgressBar)
        if bar.total is None:  # the lab reported no progress units: show it complete
            bar.update(total=1, progress=1)
        self._load_past_runs()
        self.query_one("#lab-log", RichLog).focus()  # off the disabled form; enter accepts
        body = self.query_one("#lab-body", VerticalScroll)
        # after the outcome is laid out: scrolling now would stop short of it (seen at 80x24);
        # and if the body grows after that (the log's last lines laid out late), follow it
        self.call_after_refresh(lambda: body.scroll_end(animate=False))
        self.watch(body, "virtual_size", self._follow_end, init=False)
        self.refresh_bindings()

    def _follow_end(self, old: Size, new: Size) -> None:
        """The body grew while the view was at its end: stay at the end (a view the user has
        scrolled away from is left where it is)."""
        body = self.query_one("#lab-body", VerticalScroll)
        old_end = max(0, old.height - body.scrollable_content_region.height)
        if new.height > old.height and body.scroll_y >= old_end:
            body.scroll_end(animate=False)

    def action_leave(self) -> None:
        """The first escape during a run cancels it and stays, so the partial log can be
        read beside the "cancelled" status; the next one leaves (once the run is recorded)."""
        if self.service.running:
            if self._cancel_pressed:
                self._leave_when_done = True
            self._cancel_pressed = True
            self.service.cancel()
            self._show_progress()
            return
        self.dismiss(self.rated)

    def action_accept(self) -> None:
        outcome = self.service.outcome
        if outcome is not None and outcome.suggested_rating is not None:
            self.action_rate(outcome.suggested_rating)

    def action_rate(self, rating: int) -> None:
        if not self.service.can_rate:
            return
        saved = self.service.rate(rating)
        if not saved.ok:
            self.notify(str(saved.notice), severity="error", timeout=8)
            return
        card = self.service.card  # the card the lab rated, named: never "whatever is current"
        if card is not None:
            announce_rated(self.app, [card.id])  # home and the browser read it again
        change = self.service.change  # what the rating did: rescheduled, logged, or not rated
        named = f": {card.id}" if card is not None else ""
        said = change.describe() if change is not None else f"{RATING_NAMES[rating]}{named}"
        self.notify(f"Rated {said}" if change is None or change.changed else said, timeout=5)
        if self.service.leech_notice:  # rated outside review (the labs list): nobody else tells
            self.notify(self.service.leech_notice, severity="warning", timeout=8)
        self.dismiss(rating)

    def action_results(self) -> None:
        outcome = self.service.outcome
        if outcome is None or self.controller is None:
            return
        from drill.tui.screens.lab_results import LabResultsScreen

        self.app.push_screen(LabResultsScreen(outcome.result, self.controller.out_dir))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        record = next((r for r in self._past if f"run-{r.id}" == option_id), None)
        if record is not None:
            open_run_record(self.app, record)

    async def on_unmount(self) -> None:
        # Leaving or quitting during a run: kill the run and wait (off the event loop) until
        # it is recorded.
        await self.service.wait_stopped()


def open_run_record(app: App[Any], record: RunRecord) -> None:
    """Reopen a stored run in the results view (its run dir may be gone: say so)."""
    from drill.tui.screens.lab_results import LabResultsScreen

    result = record.load_result()
    if result is None:
        app.notify(f"The run dir {record.run_dir} has no result.json any more.", timeout=6)
        result = {"lab": record.lab, "status": record.status, "params": record.params}
    title = f"Results · {record.lab} · {record.short()}"
    app.push_screen(LabResultsScreen(result, record.run_dir, title))


def open_lab_panel(
    app: App[Any],
    services: Services | None,
    card: Any,
    deck_id: str | None,
    session: ReviewSession | None = None,
    callback: Callable[[int | None], Any] | None = None,
    **panel_options: Any,
) -> bool:
    """Push the lab panel for `card` (a deck Card, or anything with the `id` of one, such as
    the review screen's first-paint record). False (with a notice) when it cannot open.
    `services`: None while they load (then only a deck Card opens, and no history is kept).
    `callback` gets the rating given in the panel (None: not rated); `panel_options` go to
    the LabRunService (runner, runs_root, timeout_s: tests)."""
    from drill.decks.models import Card
    from drill.services import lab_run

    if not isinstance(card, Card):
        found = services.decks.card(getattr(card, "id", "")) if services is not None else None
        if found is None:
            app.notify("Still loading the decks; try again in a moment.", timeout=3)
            return False
        card = found
    if card.lab is None:
        app.notify("This card has no lab.", timeout=3)
        return False
    try:
        panel = LabPanelScreen(lab_run(services, card, deck_id, session=session, **panel_options))
    except DrillError as error:  # the card names a lab this version does not have
        app.notify(str(error), severity="error", timeout=6)
        return False
    app.push_screen(panel, callback)
    return True
