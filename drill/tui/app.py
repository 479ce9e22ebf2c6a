"""The drill TUI: home screen -> review screen -> summary.

Startup order keeps the first paint light: the home screen (and, with `start_review`, the first
card) are painted from the deck cache and a read-only schedule snapshot; after that a worker thread
builds the app's services (drill.services: validated decks, the database and the services over
them), which every screen reaches through `DrillHost.services` or the slot they arrive in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual import events
from textual.worker import Worker, WorkerState

from drill.errors import DrillError, StorageError
from drill.gc_pause import collector_paused
from drill.review.due import FirstPaint
from drill.services import Services
from drill.tui.compat import debug_enabled
from drill.tui.host import DrillHost
from drill.tui.plain import shown
from drill.tui.screens.home import HomeScreen
from drill.tui.startup import AppOptions, invalid_deck_notice
from drill.tui.typeahead import TypesAhead

__all__ = ["AppOptions", "DrillApp", "run_app"]

KEY_STUCK_S = 2.0  # a key handed over and never seen handled no longer holds the ones after it


class DrillApp(DrillHost):
    TITLE = "drill"
    CSS_PATH = Path(__file__).with_name("drill.tcss")

    def __init__(
        self,
        options: AppOptions | None = None,
        *,
        on_card_painted: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(options)
        self.on_card_painted = on_card_painted  # benchmark/test hook: card id after each paint
        self.load_error: str | None = None
        self._notified_invalid = False
        # Raises DrillError (e.g. a missing --decks dir, a damaged database) before any
        # screen exists: the CLI prints it as one line.
        self._first: FirstPaint | None = self._startup_read()
        self._held_keys: list[events.Event] = []  # keys and pastes not handed over yet
        self._in_flight: events.Event | None = None  # handed over, not handled yet

    # --- keys: one at a time, each after the one before is handled ---------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)):
            if not event.is_forwarded:
                self._held_keys.append(event)
                await self.release_keys()
                return
            if event is self._in_flight:  # it bubbled up unhandled: the app's bindings now
                await super().on_event(event)
                await self._handled(event)
                return
        await super().on_event(event)

    async def release_keys(self) -> None:
        """Hand the held keys over, in order, while none is in flight and the screen is ready
        for them (drill/tui/typeahead.py)."""
        while self._held_keys and self._in_flight is None:
            if isinstance(self.screen, TypesAhead) and not self.screen.keys_ready:
                return  # its field has no focus yet: the screen calls this once it has
            event = self._held_keys.pop(0)
            target = self.focused or self.screen
            self._in_flight = event
            await super().on_event(event)
            if not event.is_forwarded:  # an app binding took it, or nothing could
                self._in_flight = None
            elif not target.call_later(self._after, target, event):
                self._in_flight = None  # the target is closing: nothing more will come
            else:  # a safety net only: a widget removed with the key still in its queue
                self.set_timer(KEY_STUCK_S, partial(self._handled, event))

    async def _after(self, node: Any, event: events.Event) -> None:
        """Runs in `node`'s queue after `node` handled `event`, so it knows whether the event
        stopped there or went on to the parent's queue (then this follows it there)."""
        if event is not self._in_flight:
            return
        parent = node.parent
        if parent is self or parent is None:
            # A screen marks what it passes to the app as stopped, so the flag says nothing
            # here; queued after the event, this runs after the app handled it, if it came.
            if not self.call_later(self._handled, event):
                await self._handled(event)
        elif event._stop_propagation or not parent.call_later(self._after, parent, event):
            await self._handled(event)

    async def _handled(self, event: events.Event) -> None:
        if event is self._in_flight:
            self._in_flight = None
            await self.release_keys()

    # --- data --------------------------------------------------------------------------------
    def _startup_read(self) -> FirstPaint | None:
        from drill import guarded_db

        # Every deck-cache entry and schedule row becomes objects that live on: collections
        # meanwhile only walk them (~1/3 of the read at 5,000 cards, issue 40).
        with collector_paused():
            done = guarded_db.read(self.startup.first_paint)
        if isinstance(done.error, DrillError):
            raise done.error
        if done.error is not None:  # a damaged database file: one line, exit 2
            raise StorageError(guarded_db.error_detail(done.error))
        return done.value

    def card_painted(self, card_id: str) -> None:
        if self.on_card_painted is not None:
            self.on_card_painted(card_id)
        self._start_loading_services()  # no-op once started

    # --- lifecycle ---------------------------------------------------------------------------
    _load_worker: Worker[Services] | None = None

    def on_mount(self) -> None:
        self._drill_loop = asyncio.get_running_loop()
        first, self._first = self._first, None  # one light read serves home and review
        self.push_screen(HomeScreen(first))
        if first is not None:
            self._notify_invalid(first)
        if self.options.start_review is not None:
            deck = None if self.options.start_review == "all" else self.options.start_review
            pushed = self.start_review(deck, first if deck is None else None)
            if pushed and first is not None:
                return  # the services load once the first card is painted
        if first is None:
            self._start_loading_services()  # cold start: nothing to paint until it is done
        else:
            self.call_after_refresh(self._start_loading_services)

    def _start_loading_services(self) -> None:
        if self._load_worker is None:
            self._load_worker = self.run_worker(
                self._load_services, name="load-services", thread=True, exit_on_error=False
            )

    def _load_services(self) -> Services:
        # Runs in the worker thread. The slot is settled straight on the loop, not through the
        # app's message queue: an action awaiting wait_services() may be holding that queue.
        loop = self._drill_loop
        try:
            return self.startup.load()
        finally:
            loop.call_soon_threadsafe(self.slot.settle)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._load_worker:
            return
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.load_error = f"{type(error).__name__}: {error}"
            message = f"drill: error: cannot load decks or database: {error}"
            self.exit(return_code=2, message=shown(message))  # printed by Rich: no markup
            return
        if event.state != WorkerState.SUCCESS:
            return
        services = await self.wait_services()  # settled by the thread via the loop
        for notice in services.notices if services is not None else []:
            self.notify(notice, severity="warning", timeout=10)
        if services is not None:
            backup = partial(self._daily_backup, services)
            self.run_worker(backup, name="daily-backup", thread=True, exit_on_error=False)
        from drill.tui.screens.review import ReviewScreen

        for screen in self.screen_stack:
            if isinstance(screen, HomeScreen) and not screen.loaded:
                data = self.light_read()
                if data is not None:
                    self._notify_invalid(data)
                screen.show(data)
            elif isinstance(screen, ReviewScreen):
                await screen.on_services_loaded()
        if self.options.start_study is not None:  # `drill study`: once the decks are loaded
            from drill.tui.screens.study_form import start_study

            chosen, self.options.start_study = self.options.start_study, None
            start_study(self, chosen)

    def _daily_backup(self, services: Services) -> None:
        notice = services.daily_backup()
        if notice is not None:
            self.call_from_thread(self.notify, notice, severity="warning", timeout=8)

    def _notify_invalid(self, data: FirstPaint) -> None:
        notice = invalid_deck_notice(data.invalid_paths, data.index.skipped_cards())
        if notice and not self._notified_invalid:
            self._notified_invalid = True
            self.notify(notice, title="Decks", severity="warning", timeout=10)

    def start_review(self, deck_id: str | None, data: FirstPaint | None = None) -> bool:
        """Push a review screen for one deck (None: all decks); False when nothing is due."""
        from drill.tui.screens.review import ReviewScreen

        title = self.deck_title(deck_id)
        services = self.services
        if services is not None:
            from drill import guarded_db

            done = guarded_db.read(lambda: services.review_session(deck_id))
            session = done.value
            if session is None:
                self.notify(str(done.notice), severity="error", timeout=8)
                return False
            if session.current is None:
                self.notify("Nothing to review here right now.", timeout=4)
                return False
            self.push_screen(ReviewScreen(deck_id, title, session=session))
            return True
        data = data or self.light_read(deck_id)
        if data is not None and not data.queue:
            self.notify("Nothing to review here right now.", timeout=4)
            return False
        self.push_screen(ReviewScreen(deck_id, title, first=data))
        return True

    def on_unmount(self) -> None:
        self.startup.close()


def run_app(options: Any = None) -> int:
    """Run the TUI; `options` is an AppOptions or the CLI's argparse namespace."""
    app = DrillApp(AppOptions.from_args(options))
    result = app.run(headless=app.options.headless)
    if app.crash is not None and not debug_enabled():
        raise app.crash
    return app.return_code if app.return_code is not None else int(result or 0)
