"""Review screen: front (Markdown) -> space reveals back + rubric -> 1-4 rate.

The first card can come from the light first-paint read (a CardRecord) before the review
session exists; ratings, undo, bury and suspend wait for the session (built once the app's
heavy backend has loaded in a worker). Every action that changes state runs to completion,
database commit included, before the next card is painted; keys that make no sense for the
current state (rating an unrevealed card, undo with nothing to undo) are ignored.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from drill.tui.formatting import RATING_NAMES, back_markdown, rating_label

if TYPE_CHECKING:
    from datetime import timedelta

    from drill.home_data import FirstPaint
    from drill.review_session import ReviewSession
    from drill.tui.app import DrillApp


class ShownCard(Protocol):
    id: str
    front: str
    back: str

    @property
    def rubric(self) -> Any: ...


class RatingChoice(Static):
    """One of the four rating choices; clicking it rates like its key."""

    def __init__(self, rating: int) -> None:
        super().__init__(rating_label(rating, None), id=f"rate-{rating}", classes="rating")
        self.rating = rating

    async def on_click(self) -> None:
        screen = self.screen
        if isinstance(screen, ReviewScreen):
            await screen.run_action(f"rate({self.rating})")


class ReviewScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "space", "Show / Good"),
        Binding("1", "rate(1)", "Again"),
        Binding("2", "rate(2)", "Hard"),
        Binding("3", "rate(3)", "Good"),
        Binding("4", "rate(4)", "Easy"),
        Binding("u", "undo", "Undo"),
        Binding("b", "bury", "Bury"),
        Binding("s", "suspend", "Suspend"),
        Binding("l", "lab", "Run lab"),
        Binding("escape,q", "leave", "Home"),
    ]

    def __init__(
        self,
        deck_id: str | None,
        title: str,
        *,
        first: FirstPaint | None = None,
        session: ReviewSession | None = None,
    ) -> None:
        super().__init__()
        self._first = first  # light read: lets the first card paint before the session exists
        self.deck_id = deck_id  # None: all decks
        self.deck_title = title
        self.session: ReviewSession | None = session
        self.card: ShownCard | None = None
        self.card_deck = ""
        self.is_new = False
        self.edited = False
        self.revealed = False
        self.shown_at = time.monotonic()
        self._remaining_hint = 0
        self._attach_lock = asyncio.Lock()
        self._footer_state: tuple[bool, bool, bool] | None = None

    @property
    def drill_app(self) -> DrillApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="review-status")
        with VerticalScroll(id="card"):
            yield Static("", id="edited-marker")
            yield Static(id="front", classes="card-text")
            yield Static("", id="divider")
            yield Static(id="back", classes="card-text")
        yield Static("space: show the answer", id="reveal-hint")
        with Horizontal(id="ratings"):
            for rating in RATING_NAMES:
                yield RatingChoice(rating)
        yield Footer()

    async def on_mount(self) -> None:
        app = self.drill_app
        if self.session is None and app.backend.heavy is not None:
            self.session = app.backend.new_session(self.deck_id)
        if self.session is not None:
            self._first = None
            await self._show_from_session()
            return
        first, self._first = self._first, None
        if first is None or first.first is None:
            # Cold start: nothing light to show; the app calls on_heavy_loaded() when ready.
            self.query_one("#review-status", Static).update("Loading decks…")
            self.query_one("#reveal-hint", Static).display = False
            self.query_one("#ratings", Horizontal).display = False
            return
        self._remaining_hint = len(first.queue)
        await self._show(
            first.first,
            deck=first.queue[0].deck_id,
            is_new=first.queue[0].is_new,
            edited=first.edited_since_review(first.first.id),
        )

    # --- session ---------------------------------------------------------------------------
    async def _attach_session(self) -> bool:
        """Build the session once the heavy backend is there; False if it failed to load."""
        async with self._attach_lock:  # on_heavy_loaded and a key may both get here
            if self.session is not None:
                return True
            if not await self.drill_app.wait_heavy():
                return False
            self.session = self.drill_app.backend.new_session(self.deck_id)
        current = self.session.current
        if self.card is None or current is None or current.card.id != self.card.id:
            await self._show_from_session()
        else:
            self._update_ratings()
            self._update_status()
        return True

    async def on_heavy_loaded(self) -> None:
        """Called by the app when the heavy backend finished loading."""
        await self._attach_session()

    async def _show_from_session(self) -> None:
        assert self.session is not None
        current = self.session.current
        if current is None:
            self._finish()
            return
        await self._show(
            current.card, deck=current.deck_id, is_new=current.is_new, edited=current.edited
        )

    # --- painting --------------------------------------------------------------------------
    async def _show(self, card: ShownCard, *, deck: str, is_new: bool, edited: bool) -> None:
        self.card, self.card_deck, self.is_new, self.edited = card, deck, is_new, edited
        self.revealed = False
        marker = self.query_one("#edited-marker", Static)
        marker.update("✎ edited since your last review" if edited else "")
        marker.display = edited
        # Rich's Markdown in a Static renders in one pass; Textual's Markdown widget mounts a
        # widget per block and parses in a thread, which tripled rating -> next card latency.
        self.query_one("#front", Static).update(Markdown(card.front))
        # The back is rendered on reveal: a rating then only costs the front's paint.
        self.query_one("#back", Static).display = False
        self.query_one("#divider", Static).display = False
        self.query_one("#reveal-hint", Static).display = True
        self.query_one("#ratings", Horizontal).display = False
        self.query_one("#card", VerticalScroll).scroll_home(animate=False)
        self._update_status()
        self.shown_at = time.monotonic()
        self.call_after_refresh(self._painted, card.id)

    def _painted(self, card_id: str) -> None:
        self.drill_app.card_painted(card_id)
        self._sync_footer()

    def _sync_footer(self) -> None:
        """Refresh the footer only when a key's availability changed: Textual's Footer
        recomposes on every refresh (~20 ms of CPU per card otherwise)."""
        state = (
            self.card is not None,
            bool(self.session and self.session.stats.reviewed),
            self._has_lab(),
        )
        if state != self._footer_state:
            self._footer_state = state
            self.refresh_bindings()

    async def _reveal(self) -> None:
        if self.card is None:
            return
        self.revealed = True
        back = self.query_one("#back", Static)
        back.update(Markdown(back_markdown(self.card.back, list(self.card.rubric))))
        back.display = True
        self.query_one("#divider", Static).display = True
        self.query_one("#reveal-hint", Static).display = False
        self.query_one("#ratings", Horizontal).display = True
        self._update_ratings()

    def _update_ratings(self) -> None:
        intervals: dict[int, timedelta] = {}
        if self.session is not None:
            intervals = self.session.preview_intervals()
        for rating in RATING_NAMES:
            choice = self.query_one(f"#rate-{rating}", RatingChoice)
            choice.update(rating_label(rating, intervals.get(rating)))

    def _update_status(self) -> None:
        left = self.session.remaining if self.session is not None else self._remaining_hint
        kind = "new" if self.is_new else "review"
        stats = self.session.stats if self.session is not None else None
        done = f" · {stats.reviewed} done" if stats and stats.reviewed else ""
        text = f"{self.deck_title} · {self.card_deck} · {kind} · {left} left{done}"
        self.query_one("#review-status", Static).update(text)

    def _finish(self) -> None:
        from drill.tui.summary_screen import SummaryScreen

        stats = self.session.stats if self.session is not None else None
        self.card = None
        self.app.switch_screen(SummaryScreen(stats, self.deck_title))

    # --- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer lists the rating keys all along (the actions ignore them until the
        # answer is revealed): a footer whose keys changed would recompose on every card.
        if action in ("rate", "bury", "suspend"):
            return True if self.card is not None else None
        if action == "lab":
            return self._has_lab()
        if action == "undo":
            return True if self.session is not None and self.session.stats.reviewed else None
        return True

    async def action_space(self) -> None:
        if self.card is None:
            return
        if not self.revealed:
            await self._reveal()
        else:
            await self.action_rate(3)

    async def _session_on_shown_card(self) -> ReviewSession | None:
        """The session, once its current card is the one on screen (None otherwise: the
        session replaced the card while we waited, and acting on an unseen card is wrong)."""
        if self.card is None:
            return None
        shown = self.card.id
        if not await self._attach_session() or self.session is None:
            return None
        current = self.session.current
        if current is None or current.card.id != shown or self.card is None:
            return None
        return self.session

    def _saved(self, write: Callable[[], object]) -> bool:
        """Run one committing session call; a storage failure (say, another copy holding the
        database past the busy timeout) becomes a notice, and the card stays on screen."""
        from sqlalchemy.exc import SQLAlchemyError  # loaded with the repository already

        from drill.errors import DrillError

        try:
            write()
        except (SQLAlchemyError, sqlite3.Error, DrillError) as error:
            detail = str(getattr(error, "orig", None) or error).splitlines()[0]
            self.notify(f"Not saved: {detail}. Try again.", severity="error", timeout=8)
            return False
        return True

    async def action_rate(self, rating: int) -> None:
        if self.card is None or not self.revealed:
            return
        session = await self._session_on_shown_card()
        if session is None:
            return
        duration_ms = int((time.monotonic() - self.shown_at) * 1000)
        if self._saved(lambda: session.rate(rating, duration_ms)):  # returns after the commit
            await self._show_from_session()

    async def action_undo(self) -> None:
        session = self.session
        if session is None or not session.stats.reviewed:
            return
        undone: list[bool] = []
        if not self._saved(lambda: undone.append(session.undo())) or not undone[0]:
            return
        self.notify("Undid the last rating", timeout=2)
        await self._show_from_session()

    async def action_bury(self) -> None:
        session = await self._session_on_shown_card()
        if session is not None and self._saved(session.bury):
            self.notify("Buried until tomorrow", timeout=2)
            await self._show_from_session()

    async def action_suspend(self) -> None:
        session = await self._session_on_shown_card()
        if session is not None and self._saved(session.suspend):
            self.notify("Suspended", timeout=2)
            await self._show_from_session()

    def _has_lab(self) -> bool:
        return self.card is not None and getattr(self.card, "lab", None) is not None

    async def action_lab(self) -> None:
        """Open the card's lab (drill/tui/lab_panel.py); a rating accepted there goes through
        this session, so the next card is shown on return."""
        if not self._has_lab():
            return
        session = await self._session_on_shown_card()
        if session is None or session.current is None:
            return
        from drill.tui.lab_panel import open_lab_panel

        def returned(rating: int | None) -> None:
            # A rated card moved on, even when it comes straight back as a learning card.
            if rating is not None:
                self.call_later(self._show_from_session)

        open_lab_panel(self.app, session.current.card, self.card_deck, session, returned)

    def action_leave(self) -> None:
        self.card = None
        self.dismiss()
