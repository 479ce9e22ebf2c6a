"""Review screen: front (Markdown) -> space reveals back + rubric -> 1-4 rate.

The first card can come from the light first-paint read (a CardRecord) before the review
session exists; ratings, undo, bury and suspend wait for the session (built once the app's
app's services have loaded in a worker). Every action that changes state runs to completion,
database commit included, before the next card is painted; keys that make no sense for the
current state (rating an unrevealed card, undo with nothing to undo) are ignored.

Longer than the ~350-line guideline because it is one screen with many keys (reveal, rate,
undo, bury, suspend, more, lab and the return from it), each a few lines of rendering; the
decisions behind them live in drill.review.session and drill.guarded_db.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar, TypeVar

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from drill import guarded_db
from drill.decks.numbers import Instance, fresh_instance, shown_text
from drill.review.ratings import RATING_NAMES
from drill.text import printable
from drill.tui.formatting import back_markdown, rating_label
from drill.tui.plain import shown
from drill.tui.rated import announce_rated
from drill.tui.screens.numbers_answer import NumberAnswerScreen, back_with_typed_answer
from drill.tui.screens.review_card import RatingChoice, ShownCard

if TYPE_CHECKING:
    from datetime import timedelta

    from drill.review.due import FirstPaint
    from drill.review.outside import CardChange
    from drill.review.session import ReviewSession
    from drill.services import Services
    from drill.tui.host import DrillHost


T = TypeVar("T")


class ReviewScreen(Screen[None]):
    # 1-4 are not in the footer: the ratings row shows them (with intervals) once revealed.
    # Short labels so that every key fits at 80 columns.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "space", "Show/Good"),
        Binding("1", "rate(1)", "Again", show=False),
        Binding("2", "rate(2)", "Hard", show=False),
        Binding("3", "rate(3)", "Good", show=False),
        Binding("4", "rate(4)", "Easy", show=False),
        Binding("u", "undo", "Undo"),
        Binding("b", "bury", "Bury"),
        Binding("s", "suspend", "Suspend"),
        Binding("m", "more", "More"),
        Binding("l", "lab", "Lab"),
        Binding("e", "exercise", "Exercise"),
        Binding("n", "answer", "Type the number", show=False),  # a numbers card only
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
        self.kind = "review"  # new | learning | review | relearning (the header says it)
        self.edited = False
        self.revealed = False
        self.rated_in_lab: int | None = None  # the lab panel rated the card on screen
        self.numbers: Instance | None = None  # a numbers card's drawing for this showing
        self.typed: float | None = None  # the number typed for it (key n)
        self.shown_at = time.monotonic()
        self._remaining_hint = 0
        self._attach_lock = asyncio.Lock()
        self._footer_state: tuple[bool, ...] | None = None

    @property
    def drill_app(self) -> DrillHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="review-status")
        with VerticalScroll(id="card"):
            yield Static("", id="edited-marker")
            yield Static(id="front", classes="card-text")
            yield Static("", id="divider")
            yield Static(id="back", classes="card-text")
            yield Static(id="more", classes="card-text")
        yield Static("space: show the answer", id="reveal-hint")
        with Horizontal(id="ratings"):
            for rating in RATING_NAMES:
                yield RatingChoice(rating)
        yield Footer(show_command_palette=False)  # every key fits at 80 columns

    async def on_mount(self) -> None:
        app = self.drill_app
        if self.session is None and app.services is not None:
            self.session = self._new_session(app.services)
        if self.session is not None:
            self._first = None
            self._skipped_notice(self.session)
            await self._show_from_session()
            return
        first, self._first = self._first, None
        if first is None or first.first is None:
            # Cold start: nothing light to show; the app calls on_services_loaded() when ready.
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
            kind="new" if first.queue[0].is_new else "review",
        )

    # --- session ---------------------------------------------------------------------------
    async def _attach_session(self) -> bool:
        """Build the session once the services are there; False if they failed to load."""
        async with self._attach_lock:  # on_services_loaded and a key may both get here
            if self.session is not None:
                return True
            services = await self.drill_app.wait_services()
            if services is None:
                return False
            self.session = self._new_session(services)
            if self.session is None:
                return False
        current = self.session.current
        if self.card is None or current is None or current.card.id != self.card.id:
            await self._show_from_session()
        else:
            self.kind = current.kind  # the light read knew only new / not new
            self._update_ratings()
            self._update_status()
        return True

    def _new_session(self, services: Services) -> ReviewSession | None:
        """A session over the loaded services; None (with a notice) when the database cannot
        be read: the card on screen stays, and the next key tries again."""
        done = guarded_db.read(lambda: services.review_session(self.deck_id))
        if not done.ok:
            self.notify(str(done.notice), severity="error", timeout=8)
        if done.value is not None:
            self._skipped_notice(done.value)
        return done.value

    def _skipped_notice(self, session: ReviewSession) -> None:
        """Once per session: the cards left out because their stored row is damaged."""
        if session.notice:  # PlainNotices: shown as text, control characters made visible
            self.notify(session.notice, title="Review", severity="warning", timeout=10)

    async def on_services_loaded(self) -> None:
        """Called by the app when its services finished loading."""
        await self._attach_session()

    async def _show_from_session(self) -> None:
        assert self.session is not None
        current = self.session.current
        if current is None:
            self._finish()
            return
        await self._show(
            current.card,
            deck=current.deck_id,
            is_new=current.is_new,
            edited=current.edited,
            kind=current.kind,
        )

    # --- painting --------------------------------------------------------------------------
    async def _show(
        self, card: ShownCard, *, deck: str, is_new: bool, edited: bool, kind: str
    ) -> None:
        self.card, self.card_deck, self.is_new, self.edited = card, deck, is_new, edited
        self.kind = kind
        self.numbers, self.typed = fresh_instance(card), None
        self.revealed = False
        self.rated_in_lab = None
        self.query_one("#more", Static).display = False
        marker = self.query_one("#edited-marker", Static)
        marker.update("✎ edited since your last review" if edited else "")
        marker.display = edited
        # Rich's Markdown in a Static renders in one pass; Textual's Markdown widget mounts a
        # widget per block and parses in a thread, which tripled rating -> next card latency.
        front = shown_text(card.front, self.numbers)
        self.query_one("#front", Static).update(Markdown(printable(front)))
        # The back is rendered on reveal: a rating then only costs the front's paint.
        self.query_one("#back", Static).display = False
        self.query_one("#divider", Static).display = False
        hint = self.query_one("#reveal-hint", Static)
        hint.update("space: show the answer" + (" · n: type it" if self.numbers else ""))
        hint.display = True
        self.query_one("#ratings", Horizontal).display = False
        self.query_one("#card", VerticalScroll).scroll_home(animate=False)
        self._update_status()
        self.shown_at = time.monotonic()
        self.call_after_refresh(self._painted, card.id)

    def _painted(self, card_id: str) -> None:
        self.drill_app.card_painted(card_id)
        self._sync_footer()
        if self._has_lab() and not self.app.is_headless:  # Pilot tests never start torch
            from drill.labs.warmup import prewarm

            prewarm()  # the warm launcher imports torch while the user reads: `l` is instant

    def _sync_footer(self) -> None:
        """Refresh the footer only when a key's availability changed: Textual's Footer
        recomposes on every refresh (~20 ms of CPU per card otherwise)."""
        state = (
            self.card is not None,
            bool(self.session and self.session.can_undo),
            self._has_lab(),
            self._has_exercise(),
            self._has_more(),
            self.rated_in_lab is not None,
        )
        if state != self._footer_state:
            self._footer_state = state
            self.refresh_bindings()

    async def _reveal(self) -> None:
        if self.card is None:
            return
        self.revealed = True
        back = self.query_one("#back", Static)
        text = back_with_typed_answer(self.card.back, self.numbers, self.typed)
        back.update(Markdown(printable(back_markdown(text, list(self.card.rubric)))))
        back.display = True
        self.query_one("#divider", Static).display = True
        self.query_one("#reveal-hint", Static).display = False
        self.query_one("#ratings", Horizontal).display = True
        self._update_ratings()

    def _update_ratings(self) -> None:
        intervals: dict[int, timedelta] = {}
        session = self.session
        if session is not None:
            done = guarded_db.read(session.preview_intervals)
            if not done.ok:  # the ratings still work; only the intervals are missing
                self.notify(str(done.notice), severity="error", timeout=8)
            intervals = done.value or {}
        for rating in RATING_NAMES:
            choice = self.query_one(f"#rate-{rating}", RatingChoice)
            choice.update(rating_label(rating, intervals.get(rating)))

    def _update_status(self) -> None:
        # Counts first: a narrow terminal cuts the end of the line, never "N left".
        left = self.session.remaining if self.session is not None else self._remaining_hint
        stats = self.session.stats if self.session is not None else None
        done = f" · {stats.reviewed} done" if stats and stats.reviewed else ""
        text = f"{left} left{done} · {self.kind} · {self.deck_title} · {self.card_deck}"
        self.query_one("#review-status", Static).update(shown(text))

    def _finish(self) -> None:
        from drill.tui.screens.summary import SummaryScreen

        stats = self.session.stats if self.session is not None else None
        self.card = None
        self.app.switch_screen(SummaryScreen(stats, self.deck_title))

    # --- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer lists the rating keys all along (the actions ignore them until the
        # answer is revealed): a footer whose keys changed would recompose on every card.
        if action in ("rate", "bury", "suspend"):
            return True if self.card is not None and self.rated_in_lab is None else None
        if action == "lab":
            return self._has_lab() and self.rated_in_lab is None
        if action == "exercise":
            return self._has_exercise() and self.rated_in_lab is None
        if action == "more":
            return self._has_more()
        if action == "undo":
            return True if self.session is not None and self.session.can_undo else None
        return True

    async def action_space(self) -> None:
        if self.card is None:
            return
        if self.rated_in_lab is not None:  # the back was shown after a lab rating: move on
            await self._show_from_session()
        elif not self.revealed:
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

    def _saved(self, write: Callable[[], T]) -> guarded_db.Done[T]:
        """Run one committing session call; a database failure (say, another copy holding the
        database past the busy timeout) becomes a notice, and the card stays on screen."""
        done = guarded_db.write(write)
        if not done.ok:
            self.notify(str(done.notice), severity="error", timeout=8)
        return done

    async def action_rate(self, rating: int) -> None:
        if self.card is None or not self.revealed or self.rated_in_lab is not None:
            return
        session = await self._session_on_shown_card()
        if session is None:
            return
        duration_ms = int((time.monotonic() - self.shown_at) * 1000)
        rated_id = self.card.id
        if self._saved(lambda: session.rate(rating, duration_ms)).ok:  # after the commit
            announce_rated(self.app, [rated_id])  # home and the browser read it again
            self._leech_notice()
            await self._show_from_session()

    def _leech_notice(self) -> None:
        """One notice per card the last ratings made a leech (an exercise rates several)."""
        for notice in self.session.take_notices() if self.session is not None else []:
            self.notify(notice, severity="warning", timeout=6)

    async def action_undo(self) -> None:
        session = self.session
        if session is None or not session.can_undo:
            return
        kind = session.last_action
        if not self._saved(session.undo).value:  # nothing undone, or not saved
            return
        if session.current is not None:  # the undone card is current again
            announce_rated(self.app, [session.current.card.id])  # home and the browser read it
        undone = {"rate": "rating", "bury": "bury", "suspend": "suspend"}.get(kind or "", "action")
        self.notify(f"Undid the {undone}", timeout=2)
        await self._show_from_session()

    async def action_answer(self) -> None:
        """A numbers card: type the answer; the back then says how far off it is."""
        if self.numbers is not None and not self.revealed:
            self.app.push_screen(NumberAnswerScreen(self.numbers.spec.unit), self._answered)

    async def _answered(self, typed: float | None) -> None:
        if typed is not None and self.numbers is not None and not self.revealed:
            self.typed = typed
            await self._reveal()

    def _has_more(self) -> bool:
        return self.card is not None and bool(getattr(self.card, "more", ""))

    async def action_more(self) -> None:
        """Show the card's longer explanation (`more:`), revealing the back first."""
        if not self._has_more() or self.card is None:
            return
        if not self.revealed:
            await self._reveal()
        more = self.query_one("#more", Static)
        more_text = shown_text(str(getattr(self.card, "more", "")), self.numbers)
        more.update(Markdown(printable(more_text)))
        more.display = True
        self.call_after_refresh(
            lambda: self.query_one("#card", VerticalScroll).scroll_to_widget(more, top=True)
        )

    async def action_bury(self) -> None:
        session = await self._session_on_shown_card()
        if session is not None and self.card is not None:
            await self._set_aside(session.bury, "Buried until tomorrow")

    async def _set_aside(self, write: Callable[[], None], said: str) -> None:
        """Bury or suspend the card on screen; once saved, home and the browser read it again."""
        card_id = self.card.id if self.card is not None else None
        if card_id is not None and self._saved(write).ok:
            announce_rated(self.app, [card_id])
            self.notify(said, timeout=2)
            await self._show_from_session()

    async def action_suspend(self) -> None:
        session = await self._session_on_shown_card()
        if session is not None and self.card is not None:
            await self._set_aside(session.suspend, "Suspended")

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
        from drill.tui.screens.lab_panel import open_lab_panel

        def returned(rating: int | None) -> None:
            # The user came to learn the answer: show the rated card's back before moving on.
            if rating is not None:
                self.call_later(self._show_after_lab, rating)

        open_lab_panel(
            self.app,
            self.drill_app.services,
            session.current.card,
            self.card_deck,
            session,
            returned,
            shown_at=self.shown_at,
        )

    def _has_exercise(self) -> bool:
        return self.card is not None and bool(getattr(self.card, "exercise", None))

    async def action_exercise(self) -> None:
        """Open the card's exercise; solving it rates the card through this session."""
        if not self._has_exercise() or self.card is None:
            return
        session = await self._session_on_shown_card()
        if session is None or session.current is None:
            return
        from drill.tui.screens.exercise import ExerciseScreen

        shown_at, shown_id = self.shown_at, self.card.id
        rated: list[str] = []

        def rate(card_id: str, deck_id: str, rating: int) -> CardChange:
            # Called from the check's worker thread; the session is touched on the UI thread.
            # Each named card is rated itself (never "whatever is current by now"); an error
            # propagates, so the exercise screen lists only the ratings written.
            duration_ms = max(0, int((time.monotonic() - shown_at) * 1000))
            spent = duration_ms if card_id == shown_id else 0
            change = self.app.call_from_thread(
                partial(session.rate_card, from_outside=card_id != shown_id),
                card_id, deck_id, rating, spent,
            )  # fmt: skip
            if change.changed:
                rated.append(card_id)
            return change

        def returned(rating: int | None) -> None:
            if rating is not None and shown_id in rated:
                self.call_later(self._show_after_lab, rating, "exercise")
            elif rated:  # other cards were rated: the one on screen is still to do
                self._leech_notice()
                self._update_status()
                self._sync_footer()

        services = self.drill_app.services
        if services is None:  # the session exists, so the services do: never here
            return
        name = str(getattr(self.card, "exercise", ""))
        self.app.push_screen(ExerciseScreen(services.exercises, name, rate), returned)

    async def _show_after_lab(self, rating: int, where: str = "lab") -> None:
        """The card the lab panel (or its exercise) rated stays on screen, revealed; space moves
        on."""
        if self.card is None:
            return
        self._leech_notice()
        if not self.revealed:
            await self._reveal()
        self.rated_in_lab = rating
        self.query_one("#ratings", Horizontal).display = False
        hint = self.query_one("#reveal-hint", Static)
        hint.update(f"Rated {RATING_NAMES[rating]} in the {where} · space: next card")
        hint.display = True
        self._update_status()
        self._sync_footer()

    def action_leave(self) -> None:
        self.card = None
        self.dismiss()
