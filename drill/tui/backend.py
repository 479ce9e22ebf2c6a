"""What the TUI needs from the domain layer, in two speeds.

`Backend.first_paint()` is the light read path (deck cache + a read-only schedule snapshot):
enough to paint the home screen and the first review card. `Backend.load_heavy()` imports the
validated decks (pydantic) and opens the database repository; the app runs it in a worker
thread after the first paint. Review sessions and every write need the heavy part. No widget
imports here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.review.due import FirstPaint, first_paint

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.loader import DeckSet
    from drill.review.session import ReviewSession
    from drill.review.study import StudyFilter


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
    start_study: StudyFilter | None = None  # `drill study`: straight into custom study

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
    notices: list[str] = field(default_factory=list)  # shown once the app has them


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
            # once loaded, the validated decks answer (the cache may be unwritable)
            index=self.heavy.decks.index if self.heavy is not None else None,
        )

    def load_heavy(self) -> Heavy:
        """Validate decks (refreshing the cache) and open/migrate the database. Thread-safe to
        call from a worker: it touches no widgets."""
        from drill.database import open_app_database
        from drill.decks.loader import load_decks
        from drill.review.history_merge import merge_replaced_history

        decks = load_decks(self.options.deck_dirs, include_bundled=self.options.include_bundled)
        db = open_app_database()
        _report, notice = merge_replaced_history(decks, db)  # before any session reads state
        self.heavy = Heavy(decks, db, [notice] if notice else [])
        return self.heavy

    def new_session(self, deck_id: str | None) -> ReviewSession:
        from drill.review.session import ReviewSession

        if self.heavy is None:
            raise RuntimeError("new_session() before load_heavy()")
        return ReviewSession(
            self.heavy.decks,
            self.heavy.db,
            deck_id=deck_id,
            settings=self.settings,
            now=self.options.now,
        )

    def new_study_session(self, chosen: StudyFilter) -> ReviewSession:
        """A custom-study session (drill/review/study.py says how it treats the schedule)."""
        from drill.review.session import ReviewSession

        if self.heavy is None:
            raise RuntimeError("new_study_session() before load_heavy()")
        return ReviewSession(
            self.heavy.decks,
            self.heavy.db,
            settings=self.settings,
            now=self.options.now,
            study=chosen,
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
