"""The running app as screens see it: options, the light read, the services and review.

`DrillApp` (drill.tui.app) is the one implementation. Screens that need the app itself (home,
review, custom study) type it as `DrillHost`, so they import this module, never drill.tui.app,
and the app can import them without a circle. Screens that only need the services take them
(or the slot they arrive in) as a constructor argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drill.tui.compat import QuietCrashes
from drill.tui.plain import PlainNotices
from drill.tui.startup import AppOptions, Startup

if TYPE_CHECKING:
    from drill.review.due import FirstPaint
    from drill.services import Services, ServicesSlot


class DrillHost(PlainNotices[int], QuietCrashes[int]):
    def __init__(self, options: AppOptions | None = None) -> None:
        super().__init__()
        self.options = options or AppOptions()
        self.startup = Startup(self.options)
        self.deck_titles: dict[str, str] = {}

    # --- services ----------------------------------------------------------------------------
    @property
    def slot(self) -> ServicesSlot:
        """Where the services arrive after the first paint (hand it to screens that wait)."""
        return self.startup.slot

    @property
    def services(self) -> Services | None:
        """The services, or None while they are still loading (or failed to)."""
        return self.startup.slot.ready

    async def wait_services(self) -> Services | None:
        """The services once the load has finished; None when it failed."""
        return await self.startup.slot.wait()

    # --- the light read ------------------------------------------------------------------------
    def light_read(self, deck_id: str | None = None) -> FirstPaint | None:
        """The light read after startup; None (with a notice) when the database cannot be
        read, so the screen keeps what it shows."""
        from drill import guarded_db

        done = guarded_db.read(lambda: self.startup.first_paint(deck_id))
        if not done.ok:
            self.notify(str(done.notice), severity="error", timeout=8)
        return done.value

    def deck_title(self, deck_id: str | None) -> str:
        return "All decks" if deck_id is None else self.deck_titles.get(deck_id, deck_id)

    # --- review --------------------------------------------------------------------------------
    def start_review(self, deck_id: str | None, data: FirstPaint | None = None) -> bool:
        """Push a review screen for one deck (None: all decks); False when nothing is due."""
        raise NotImplementedError  # DrillApp pushes the review screen

    def card_painted(self, card_id: str) -> None:
        """The review screen painted a card (hooks for benchmarks and the deferred load)."""
