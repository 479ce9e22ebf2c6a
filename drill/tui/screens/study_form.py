"""Custom study form (home `c`): tag / level / deck / count, then a review of the matching cards
beyond today's limits. The schedule rules are drill/review/study.py's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from drill import guarded_db
from drill.review.study import StudyFilter, parse_filter
from drill.tui.typeahead import TypesAhead

if TYPE_CHECKING:
    from drill.tui.host import DrillHost

FIELDS = (
    ("tags", "tags", "any: e.g. checkpoint nccl"),
    ("level", "level", "any: easy | medium | hard"),
    ("deck", "deck", "any: a deck id"),
    ("count", "count", "50"),
)


class StudyFormScreen(TypesAhead, ModalScreen[None]):
    DEFAULT_CSS = """
    StudyFormScreen { align: center middle; }
    #study-form { width: 64; max-width: 100%; height: auto; padding: 0 1;
                  border: round $primary; background: $surface; }
    #study-form Label { width: 8; padding-top: 1; }
    #study-form Input { width: 1fr; }
    #study-form Horizontal { height: auto; }
    #study-help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "start", "Start", priority=True),
    ]

    def __init__(self, deck_id: str | None = None) -> None:
        super().__init__()
        self.deck_id = deck_id

    @property
    def drill_app(self) -> DrillHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(id="study-form"):
            yield Static("Custom study: beyond today's limits", id="study-heading")
            for key, label, placeholder in FIELDS:
                with Horizontal():
                    yield Label(label)
                    yield Input(placeholder=placeholder, id=f"study-{key}")
            yield Static(
                "Not-yet-due cards: rating logged, schedule unchanged.\n"
                "enter: start · tab: next field · esc: cancel",
                id="study-help",
            )

    def on_mount(self) -> None:
        if self.deck_id:
            self.query_one("#study-deck", Input).value = self.deck_id
        self.query_one("#study-tags", Input).focus()
        self.ready_for_keys()  # what was typed while the form opened goes to its first field

    def _value(self, key: str) -> str:
        return self.query_one(f"#study-{key}", Input).value

    def action_cancel(self) -> None:
        self.dismiss()

    def action_start(self) -> None:
        try:
            chosen = parse_filter(*(self._value(k) for k, _, _ in FIELDS))
        except ValueError as error:
            self.notify(str(error), severity="error", timeout=6)
            return
        if start_study(self.drill_app, chosen, before=self.dismiss):
            return


def start_study(
    app: DrillHost, chosen: StudyFilter, before: Callable[[], object] | None = None
) -> bool:
    """Push a review screen over a custom-study session; False (with a notice) when the decks
    are still loading, the database cannot be read or no card matches. `before` runs just
    before the push (the form dismisses itself)."""
    services = app.services
    if services is None:
        app.notify("Still loading the decks; try again in a moment.", timeout=3)
        return False
    done = guarded_db.read(lambda: services.study_session(chosen))
    session = done.value
    if session is None:
        app.notify(str(done.notice), severity="error", timeout=8)
        return False
    if session.current is None:
        app.notify("No cards match.", timeout=4)
        return False
    from drill.tui.screens.review import ReviewScreen

    if before is not None:
        before()
    app.push_screen(ReviewScreen(chosen.deck_id, header_title(chosen), session=session))
    return True


def header_title(chosen: StudyFilter) -> str:
    """The review header's title: the filter without its deck, which the header already names
    after the title (each card's deck)."""
    return replace(chosen, deck_id=None).describe()
