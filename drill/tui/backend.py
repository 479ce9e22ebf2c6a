"""What the TUI needs from the domain layer, in two speeds.

`Backend.first_paint()` is the light read path (deck cache + stdlib sqlite3): enough to paint the
home screen and the first review card. `Backend.load_heavy()` imports the validated decks
(pydantic) and the SQLModel repository; the app runs it in a worker thread after the first
paint. Review sessions and every write need the heavy part. No widget imports here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.home_data import FirstPaint, first_paint

if TYPE_CHECKING:
    from drill.deck_loader import DeckSet
    from drill.review_session import ReviewSession
    from storage.db import Database


def system_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class AppOptions:
    """How the app was started (from the CLI, a test or the benchmark)."""

    deck_dirs: list[Path] = field(default_factory=list)
    include_bundled: bool = True
    start_review: str | None = None  # None: home screen; "all" or a deck id: straight to review
    now: Callable[[], datetime] = system_now
    headless: bool = False  # tests and benchmarks

    @classmethod
    def from_args(cls, args: Any) -> AppOptions:
        """Accept an argparse namespace (`--decks` may be absent, a list or one path)."""
        if isinstance(args, AppOptions):
            return args
        decks = getattr(args, "decks", None) or []
        if isinstance(decks, str | Path):
            decks = [decks]
        return cls(deck_dirs=[Path(d) for d in decks])


@dataclass
class Heavy:
    decks: DeckSet
    db: Database


class Backend:
    def __init__(self, options: AppOptions) -> None:
        from drill.settings import load_settings

        self.options = options
        self.heavy: Heavy | None = None
        # Read once, up front: a bad settings file is a clear error before any screen.
        self.settings = load_settings()

    def first_paint(self, deck_id: str | None = None) -> FirstPaint | None:
        """The light read; None when the deck cache is stale or the database needs migrating
        (load_heavy() fixes both, so calling this again afterwards succeeds)."""
        return first_paint(
            self.options.deck_dirs,
            deck_id=deck_id,
            include_bundled=self.options.include_bundled,
            now=self.options.now(),
            settings=self.settings,
        )

    def load_heavy(self) -> Heavy:
        """Validate decks (refreshing the cache) and open/migrate the database. Thread-safe to
        call from a worker: it touches no widgets."""
        from drill.deck_loader import load_decks
        from drill.paths import database_path
        from storage.db import open_database

        decks = load_decks(self.options.deck_dirs, include_bundled=self.options.include_bundled)
        db = open_database(database_path())
        self.heavy = Heavy(decks, db)
        return self.heavy

    def new_session(self, deck_id: str | None) -> ReviewSession:
        from drill.review_session import ReviewSession

        if self.heavy is None:
            raise RuntimeError("new_session() before load_heavy()")
        return ReviewSession(
            self.heavy.decks,
            self.heavy.db,
            deck_id=deck_id,
            settings=self.settings,
            now=self.options.now,
        )

    def close(self) -> None:
        if self.heavy is not None:
            self.heavy.db.close()


def invalid_deck_notice(paths: Iterable[Path]) -> str | None:
    """One line naming the decks that were skipped, or None when all loaded."""
    names = [p.name for p in paths]
    if not names:
        return None
    return f"Skipped invalid deck(s): {', '.join(names)}. Run `drill decks check` for details."
