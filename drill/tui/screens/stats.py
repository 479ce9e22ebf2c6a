"""Stats screen (`S` on home): what drill.review.stats computed, drawn.

Rendering only. The figures are computed in a thread (SQLite does the grouping) and drawn by
stats_figures (the review calendar as text, the due forecast and weekly retention with
textual_plotext, imported only when the screen has something to plot).

`o` fits personal FSRS parameters (drill.review.optimize.FitJob: a subprocess, so this process
never imports the optimizer), shows its progress and the log loss before and after, and asks
before adopting them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import Footer, Static

from drill.errors import DrillError
from drill.review.stats import Stats
from drill.tui.plain import shown
from drill.tui.screens.browser_dialogs import ConfirmScreen
from drill.tui.screens.stats_figures import body_widgets, summary_text

if TYPE_CHECKING:
    from drill.review.optimize import FitJob, FitResult
    from drill.services import ServicesSlot
    from drill.tui.host import DrillHost


class StatsScreen(Screen[None]):
    DEFAULT_CSS = """
    StatsScreen #stats-title { background: $primary; color: $text; padding: 0 1; }
    StatsScreen #stats-summary { padding: 0 1; height: auto; }
    StatsScreen #stats-optimize { padding: 0 1; height: auto; color: $accent; }
    StatsScreen #stats-body { padding: 0 1; scrollbar-gutter: stable; }
    StatsScreen .stats-plot { height: 14; }
    StatsScreen .stats-block { height: auto; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "leave", "Back"),
        Binding("r", "reload", "Refresh"),
        Binding("o", "optimize", "Optimize FSRS"),
    ]

    def __init__(
        self,
        load: Callable[[], Stats] | None = None,
        *,
        stats: Stats | None = None,
        on_painted: Callable[[Stats], None] | None = None,
        fit_job: Callable[[], FitJob] | None = None,
        slot: ServicesSlot | None = None,
    ) -> None:
        """`load` and `fit_job` default to the services in `slot` (the app's, once loaded)."""
        super().__init__()
        self.slot = slot
        self._load = load
        self.stats = stats
        self.on_painted = on_painted  # benchmark hook: figures loaded, mounted and painted
        self._fit_job = fit_job
        self._job: FitJob | None = None  # the fit under way

    def compose(self) -> ComposeResult:
        # Figures computed before the screen was pushed are composed with it: one layout and
        # one paint, instead of a "Loading" frame and then a remount.
        stats = self.stats
        yield Static("drill · stats", id="stats-title")
        yield Static(summary_text(stats) if stats else "Loading statistics…", id="stats-summary")
        optimize = Static("", id="stats-optimize")
        optimize.display = False
        yield optimize
        yield VerticalScroll(*(body_widgets(stats) if stats else ()), id="stats-body")
        yield Footer()

    def on_mount(self) -> None:
        if self.stats is None:
            self.action_reload()
        elif self.on_painted is not None:
            hook, stats = self.on_painted, self.stats
            self.call_after_refresh(lambda: hook(stats))

    def action_reload(self) -> None:
        self.run_worker(self._reload(), exclusive=True, exit_on_error=False)

    async def _reload(self) -> None:
        from drill import guarded_db

        if self._load is None:
            self._load = await _loader(self.slot)
            if self._load is None:
                self.query_one("#stats-summary", Static).update("Decks did not load.")
                return
        done = await asyncio.to_thread(guarded_db.read, self._load)
        if done.value is None:
            self.query_one("#stats-summary", Static).update(shown(done.notice))
            return
        await self.query_one("#stats-body", VerticalScroll).remove_children()
        await self.show(done.value)
        if self.on_painted is not None:
            hook, stats = self.on_painted, done.value
            self.call_after_refresh(lambda: hook(stats))

    def show(self, stats: Stats) -> AwaitMount:
        self.stats = stats
        self.query_one("#stats-summary", Static).update(summary_text(stats))
        return self.query_one("#stats-body", VerticalScroll).mount_all(body_widgets(stats))

    # --- personal FSRS parameters ------------------------------------------------------------
    def _say(self, text: str) -> None:
        if not self.is_mounted:  # left while the fit ran (on_unmount cancelled it)
            return
        line = self.query_one("#stats-optimize", Static)
        line.update(shown(text))
        line.display = bool(text)

    def action_optimize(self) -> None:
        if self._job is not None:
            self.notify("The fit is still running.", timeout=3)
            return
        self._say("Fitting FSRS parameters to your review log…")
        self.run_worker(self._optimize(), group="optimize", exit_on_error=False)

    async def _optimize(self) -> None:
        from drill.review.optimize import NotEnoughReviews, OptimizeError

        make = self._fit_job or await _fit_job(self.slot)
        if make is None:
            self._say("Decks did not load: cannot fit FSRS parameters.")
            return
        job = self._job = make()

        def progress(message: str) -> None:  # from the fit's thread
            self.app.call_from_thread(self._say, f"Fitting FSRS parameters: {message}…")

        try:
            result = await asyncio.to_thread(job.run, progress)
        except NotEnoughReviews as error:
            self._say(f"Not yet: {error}.")
            return
        except (OptimizeError, DrillError) as error:
            self._say(f"FSRS fit failed: {error}")
            return
        finally:
            self._job = None
        self._offer(result)

    def _offer(self, result: FitResult) -> None:
        losses = (
            f"log loss {result.before.log_loss:.4f} with the current parameters, "
            f"{result.after.log_loss:.4f} with the fitted ones ({result.items} usable reviews)"
        )
        if not result.improves:
            self._say(f"Not adopted: {losses}; the fitted parameters predict no better.")
            return
        self._say(f"Fitted: {losses}.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._adopt(result)
            else:
                self._say(f"Not adopted: {losses}.")

        question = (
            f"Adopt the fitted FSRS parameters?\n{losses}.\nThey are written to settings.toml "
            "(fsrs_parameters) and schedule every review from now on."
        )
        self.app.push_screen(ConfirmScreen(question), answered)

    def _adopt(self, result: FitResult) -> None:
        from drill.review.optimize import adopt_parameters

        try:
            path = adopt_parameters(result.fitted)
        except DrillError as error:
            self._say(f"Not adopted: {error}")
            return
        services = self.slot.ready if self.slot is not None else None
        if services is not None:
            services.use_fsrs_parameters(result.fitted)
        self._say(f"Adopted: fsrs_parameters written to {path}; new sessions use them.")

    def on_unmount(self) -> None:
        job = self._job
        if job is not None:
            job.cancel()

    def action_leave(self) -> None:
        self.dismiss()


async def _fit_job(slot: ServicesSlot | None) -> Callable[[], FitJob] | None:
    """A fit over the services' database, compared with their current parameters."""
    from drill.review.optimize import FitJob

    services = await slot.wait() if slot is not None else None
    if services is None:
        return None
    db_path, settings = services.db.path, services.settings
    return lambda: FitJob(
        db_path, current=settings.fsrs_parameters, day_start_hour=settings.day_start_hour
    )


async def _loader(slot: ServicesSlot | None) -> Callable[[], Stats] | None:
    """A loader over the services' decks, database and settings (once they have loaded)."""
    from drill.mock.coding.past import stats_with_rounds

    services = await slot.wait() if slot is not None else None
    if services is None:
        return None
    return lambda: stats_with_rounds(
        services.decks, services.db.path, services.settings, services.now()
    )


def open_stats_screen(app: DrillHost, on_painted: Callable[[Stats], None] | None = None) -> None:
    """Compute the figures (in a thread) and push the screen with them; if they cannot be
    computed here (decks not loaded, a database error), the screen says why itself."""

    async def compute_then_push() -> None:
        from drill import guarded_db

        load = await _loader(app.slot)
        stats = None
        if load is not None:
            done = await asyncio.to_thread(guarded_db.read, load)
            stats = done.value
        app.push_screen(StatsScreen(load, stats=stats, on_painted=on_painted, slot=app.slot))

    app.run_worker(compute_then_push(), group="open-stats", exclusive=True, exit_on_error=False)
