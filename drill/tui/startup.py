"""How the TUI starts: the first paint from a light read, then the services load.

`Startup.first_paint()` is the light read path (deck cache + a read-only schedule snapshot):
enough to paint the home screen and the first review card. `Startup.load()` builds the app's
services (drill.services: validated decks, the database, the services over them); the app runs
it in a worker thread after the first paint and screens wait on `Startup.slot`. Review
sessions and every write need the services. No widget imports here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.decks.hints import check_command
from drill.decks.index import Problem
from drill.review.due import FirstPaint, first_paint
from drill.services import Services, ServicesSlot, system_now

if TYPE_CHECKING:
    from drill.review.study import StudyFilter
    from drill.settings import Settings


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


class Startup:
    """The light read (first paint) and the one load that builds the app's services."""

    def __init__(self, options: AppOptions) -> None:
        from drill.settings import load_settings

        self.options = options
        self.slot = ServicesSlot()
        # Read once, up front: a bad settings file is a clear error before any screen.
        self._settings = load_settings()

    @property
    def settings(self) -> Settings:
        """The services' settings once loaded (adopting FSRS parameters changes them)."""
        services = self.slot.ready
        return services.settings if services is not None else self._settings

    def first_paint(self, deck_id: str | None = None) -> FirstPaint | None:
        """The light read; None when the deck cache is stale or the database needs migrating
        (load() fixes both, so calling this again afterwards succeeds)."""
        services = self.slot.ready
        return first_paint(
            self.options.deck_dirs,
            deck_id=deck_id,
            include_bundled=self.options.include_bundled,
            now=self.options.now(),
            settings=self.settings,
            # once loaded, the validated decks answer (the cache may be unwritable)
            index=services.decks.index if services is not None else None,
        )

    def load(self) -> Services:
        """Build the services (drill.services.load_services) and put them in the slot; the
        caller settles the slot on the event loop. Thread-safe to call from a worker: it
        touches no widgets."""
        from drill.services import load_services

        services = load_services(
            self.options.deck_dirs,
            include_bundled=self.options.include_bundled,
            settings=self._settings,
            now=self.options.now,
        )
        self.slot.put(services)
        return services

    def close(self) -> None:
        services = self.slot.ready
        if services is not None:
            services.close()


def invalid_deck_notice(paths: Iterable[Path], skipped_cards: Iterable[Problem] = ()) -> str | None:
    """One line naming the decks that were skipped and where cards were left out (file:line,
    the first few), or None when all loaded."""
    paths, skipped_cards = list(paths), list(skipped_cards)
    names = [p.name for p in paths]
    places = list(dict.fromkeys(f"{p.path.name}:{p.line}" for p in skipped_cards))
    if not names and not places:
        return None
    parts = [f"Skipped invalid deck(s): {', '.join(names)}."] if names else []
    if places:
        more = f" and {len(places) - 3} more" if len(places) > 3 else ""
        parts.append(f"Left out card(s) with problems at {', '.join(places[:3])}{more}.")
    command = check_command([*paths, *(p.path for p in skipped_cards)])
    return " ".join([*parts, f"Run `{command}` for details."])
