"""One call to set a round up, for the CLI and for the home screen (`m`):

    run, rate = start_round("standard")            # or resume_round(round_id)
    app.push_screen(MockRoundScreen(run, rate=rate))

Imports sqlmodel and the decks: call it off the first-paint path (e.g. in a worker or on key press).
"""

from __future__ import annotations

from pathlib import Path

from drill.mock.errors import MockError
from drill.mock.round import MockRun, RateCard


def open_store():  # -> MockStore
    from drill.mock.store import MockStore
    from drill.paths import database_path
    from storage.db import DatabaseError, open_database

    try:
        return MockStore(open_database(database_path()))
    except DatabaseError as error:
        raise MockError(str(error)) from None


def start_round(
    name: str = "standard", minutes: float | None = None, deck_dirs: list[Path] | None = None
) -> tuple[MockRun, RateCard]:
    """A new round by id or round-file path, prompts chosen by the mastery mix."""
    from drill.decks.loader import load_decks
    from drill.mock.feedback import card_entries, mastery, review_rater
    from drill.mock.loader import find_round
    from drill.paths import user_deck_dirs

    definition = find_round(name, [p for p in user_deck_dirs(deck_dirs) if p.is_dir()])
    store = open_store()
    decks = load_decks(deck_dirs or None)
    run = MockRun.start_new(
        store, definition, card_entries(decks), mastery=mastery(store.db), minutes=minutes
    )
    return run, review_rater(store.db, decks)


def resume_round(
    round_id: int | None = None, deck_dirs: list[Path] | None = None
) -> tuple[MockRun, RateCard]:
    """An interrupted round (default: the latest one not yet graded)."""
    from drill.decks.loader import load_decks
    from drill.mock.feedback import review_rater

    store = open_store()
    if round_id is None:
        round_id = store.latest_unfinished()
        if round_id is None:
            raise MockError("no interrupted mock round to resume (see `drill mock history`)")
    run = MockRun.resume(store, round_id)
    return run, review_rater(store.db, load_decks(deck_dirs or None))


def latest_interrupted(store=None):  # -> ("text", round_id) | ("coding", CodingSession) | None
    """The most recently saved unfinished round of either kind (text rounds live in the
    database, coding rounds in DRILL_HOME/rounds/<id>/)."""
    from drill.mock.coding.session import CodingSession, default_rounds_dir

    store = store if store is not None else open_store()
    text_id = store.latest_unfinished()
    coding = CodingSession.latest_unfinished(default_rounds_dir())
    if coding is None:
        return None if text_id is None else ("text", text_id)
    if text_id is None:
        return ("coding", coding)
    text_saved = store.load(text_id).updated_at.timestamp()
    return ("coding", coding) if coding.saved_at() >= text_saved else ("text", text_id)


def feed_back_coding(session, deck_dirs: list[Path] | None = None) -> list[str]:
    """Rate the cards behind a finished coding round's failed checks Again (once per round)."""
    from drill.decks.loader import load_decks
    from drill.mock.coding.report import build_report, feed_back
    from drill.mock.feedback import review_rater

    store = open_store()
    decks = load_decks(deck_dirs or None)
    return feed_back(session, build_report(session), review_rater(store.db, decks), decks.deck_of)
