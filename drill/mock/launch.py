"""Setting a round up over a store and decks the caller already has (drill.services holds both;
the CLI and the home screen's `m` go through it):

    run, rate = start_round(store, decks, "standard")   # or resume_round(store, decks, round_id)
    app.push_screen(MockRoundScreen(run, rate=rate))
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from drill.mock.errors import MockError
from drill.mock.round import MockRun, RateCard

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet
    from drill.mock.coding.session import CodingSession
    from drill.mock.store import MockStore

Interrupted = tuple[Literal["text"], int] | tuple[Literal["coding"], "CodingSession"]


def start_round(
    store: MockStore,
    decks: DeckSet,
    name: str = "standard",
    minutes: float | None = None,
    deck_dirs: Iterable[Path] = (),
) -> tuple[MockRun, RateCard]:
    """A new round by id or round-file path (round files are looked for in `deck_dirs` too),
    prompts chosen by the mastery mix."""
    from drill.mock.feedback import card_entries, mastery, review_rater
    from drill.mock.loader import find_round
    from drill.paths import user_deck_dirs

    dirs = [p for p in user_deck_dirs(list(deck_dirs)) if p.is_dir()]
    definition = find_round(name, dirs)
    run = MockRun.start_new(
        store, definition, card_entries(decks), mastery=mastery(store.db), minutes=minutes
    )
    return run, review_rater(store.db, decks)  # new cards are never rated (review.outside)


def resume_round(
    store: MockStore, decks: DeckSet, round_id: int | None = None
) -> tuple[MockRun, RateCard]:
    """An interrupted round (default: the latest one not yet graded)."""
    from drill.mock.feedback import review_rater

    if round_id is None:
        round_id = store.latest_unfinished()
        if round_id is None:
            raise MockError("no interrupted mock round to resume (see `drill mock history`)")
    return MockRun.resume(store, round_id), review_rater(store.db, decks)


def latest_interrupted(store: MockStore, rounds_dir: Path | None = None) -> Interrupted | None:
    """The most recently saved unfinished round of either kind (text rounds live in the
    database, coding rounds in DRILL_HOME/rounds/<id>/)."""
    from drill.mock.coding.session import CodingSession, default_rounds_dir

    text_id = store.latest_unfinished()
    coding = CodingSession.latest_unfinished(rounds_dir or default_rounds_dir())
    if coding is None:
        return None if text_id is None else ("text", text_id)
    if text_id is None:
        return ("coding", coding)
    text_saved = store.load(text_id).updated_at.timestamp()
    return ("coding", coding) if coding.saved_at() >= text_saved else ("text", text_id)
