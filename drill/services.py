"""The app's services in one typed object, as Anki's `Collection` is to its UI.

    services = load_services(deck_dirs)          # validated decks + the migrated database
    session = services.review_session("fsdp")    # review
    services.exercises.list()                    # exercises, labs, run log, mock rounds

`load_services()` (decks from disk, database opened) and `assemble_services()` (from parts a
caller already has: tests, benchmarks) are the only places the services are built, so a
service whose constructor changes is adapted here and nowhere else. The TUI builds them in a
worker after its first paint (drill.tui.startup) and hands screens a `ServicesSlot` to wait on;
CLI commands call drill.cli.services.open_services(args).

Importing this module is light (the first paint imports it): every domain import is inside a
function or under TYPE_CHECKING. No widget imports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.loader import DeckSet
    from drill.decks.models import Card
    from drill.exercises.service import ExerciseService
    from drill.labs.overview import LabsOverview
    from drill.labs.runs import LabRuns
    from drill.labs.service import LabRunService
    from drill.mock.checklist import RatingChecklist
    from drill.mock.coding.session import CodingSession
    from drill.mock.launch import Interrupted
    from drill.mock.round import MockRun, RateCard
    from drill.mock.store import MockStore
    from drill.plan.readiness import Readiness
    from drill.review.session import ReviewSession
    from drill.review.study import StudyFilter
    from drill.settings import Settings
    from storage.snapshot import PlanRow

__all__ = [
    "Services",
    "ServicesSlot",
    "assemble_services",
    "lab_run",
    "labs_overview",
    "load_services",
    "system_now",
]


def system_now() -> datetime:
    return datetime.now(UTC)


@dataclass(eq=False)
class Services:
    """Settings, decks and the database, and the services over them. The services are made
    on first use (a CLI command pays only for what it touches), always by this class."""

    settings: Settings
    decks: DeckSet
    db: Database
    deck_dirs: list[Path] = field(default_factory=list)  # --decks: the mock rounds read them too
    now: Callable[[], datetime] = system_now
    exercises_home: Path | None = None  # None: DRILL_HOME/exercises
    notices: list[str] = field(default_factory=list)  # from the load, shown once by the app

    # --- services ----------------------------------------------------------------------------
    @cached_property
    def exercises(self) -> ExerciseService:
        from drill.exercises.service import ExerciseService
        from drill.paths import drill_home

        home = self.exercises_home or drill_home() / "exercises"
        return ExerciseService(self.db, home, self.decks)

    def labs_overview(self) -> tuple[LabsOverview, str | None]:
        """The catalogue joined with the decks and the run log; see labs_overview()."""
        return labs_overview(self)

    @cached_property
    def runs(self) -> LabRuns:
        """The run log: lab runs (from the TUI and `drill lab run`) and coding-round grades."""
        from drill.labs.runs import LabRuns

        return LabRuns(self.db)

    @cached_property
    def mock_store(self) -> MockStore:
        from drill.mock.store import MockStore

        return MockStore(self.db)

    def review_session(self, deck_id: str | None = None) -> ReviewSession:
        """A review of one deck (None: all decks) at the current settings."""
        from drill.review.session import ReviewSession

        return ReviewSession(
            self.decks, self.db, deck_id=deck_id, settings=self.settings, now=self.now
        )

    def study_session(self, chosen: StudyFilter) -> ReviewSession:
        """A custom-study session (drill/review/study.py says how it treats the schedule)."""
        from drill.review.session import ReviewSession

        return ReviewSession(
            self.decks, self.db, settings=self.settings, now=self.now, study=chosen
        )

    def lab_run(self, card: Card | None, deck_id: str | None, **options: Any) -> LabRunService:
        """One run of the card's lab (or `lab=NAME`); UnknownLab for a lab this version lacks."""
        return lab_run(self, card, deck_id, **options)

    def mock_rater(self) -> RateCard:
        """rate(card_id, deck_id, rating) into the review schedule (mock-round feedback)."""
        from drill.mock.feedback import review_rater

        return review_rater(self.db, self.decks)

    # --- mock rounds ---------------------------------------------------------------------------
    def start_mock(
        self, name: str = "standard", minutes: float | None = None
    ) -> tuple[MockRun, RateCard]:
        """A new text round by id or round-file path; MockError for an unknown one."""
        from drill.mock.launch import start_round

        return start_round(self.mock_store, self.decks, name, minutes, self.deck_dirs)

    def resume_mock(self, round_id: int | None = None) -> tuple[MockRun, RateCard]:
        """An interrupted text round (default: the latest one not yet graded)."""
        from drill.mock.launch import resume_round

        return resume_round(self.mock_store, self.decks, round_id)

    def interrupted_mock(self) -> Interrupted | None:
        """The most recently saved unfinished round, text or coding."""
        from drill.mock.launch import latest_interrupted

        return latest_interrupted(self.mock_store)

    def coding_checklist(
        self, session: CodingSession, changed: list[str] | None = None
    ) -> RatingChecklist | None:
        """The checklist a finished coding round proposes before any card is rated (its failed
        checks' cards, its answered follow-ups' rubric items with the matcher's ticks); None
        once settled or while nothing was examined. Confirming it rates by the rule for ratings
        from outside review (cards never reviewed are left new); `changed` collects the ids of
        the cards whose review was written. drill.mock.coding.confirm.settle keeps the outcome."""
        from drill.mock.coding.confirm import coding_checklist
        from drill.mock.coding.report import build_report
        from drill.mock.feedback import noting_changed

        rate = self.mock_rater() if changed is None else noting_changed(self.mock_rater(), changed)
        return coding_checklist(session, build_report(session), rate, self.decks.deck_of)

    def record_grading(
        self, result: Mapping[str, Any], out_dir: Path, notify: Callable[[str], None]
    ) -> None:
        """A coding-round grading into the run log (a failure to write costs a notice)."""
        from drill.mock.coding.history import record_grading

        record_grading(result, out_dir, notify, db=self.db)

    # --- the interview plan ---------------------------------------------------------------------
    def readiness(self) -> Readiness:
        """Readiness per topic on the interview date (today without a plan) and the five
        weakest items with their actions (drill.plan.readiness)."""
        from drill.plan.readiness import readiness

        return readiness(self.decks, self.db, self.settings, self.now(), deck_dirs=self.deck_dirs)

    def set_plan(self, day: date, role: str, minutes: int) -> PlanRow:
        """Record a new interview profile, in force from now (drill.plan.profile.set_profile:
        a one-line DrillError for a date, role or budget it refuses; earlier ones are kept)."""
        from drill.plan.profile import set_profile

        return set_profile(self.db, day, role, minutes, self.now(), self.settings)

    # --- settings ------------------------------------------------------------------------------
    def use_fsrs_parameters(self, parameters: Sequence[float]) -> None:
        """Schedule new sessions with these (already saved) FSRS parameters."""
        self.settings = replace(self.settings, fsrs_parameters=tuple(parameters))

    # --- upkeep ------------------------------------------------------------------------------
    def daily_backup(self) -> str | None:
        """Today's automatic backup of the database (at most one a day; the newest 7 are kept
        in DRILL_HOME/backups); a line for a notice when it could not be taken."""
        from drill.database import daily_backup

        return daily_backup(self.db.path)

    def close(self) -> None:
        self.db.close()


def lab_run(
    services: Services | None, card: Card | None, deck_id: str | None, **options: Any
) -> LabRunService:
    """A lab run over the services' database, or before they loaded (the labs screen opens at
    once) one that keeps no history. `options` go to LabRunService (lab, session, runner,
    runs_root, timeout_s, shown_at: tests and the review screen)."""
    from drill.labs.service import LabRunService

    options.setdefault("db", services.db if services is not None else None)
    return LabRunService(card, deck_id, **options)


def labs_overview(services: Services | None) -> tuple[LabsOverview, str | None]:
    """A fresh labs overview, with a notice when the run log cannot be written. Each one
    closes the runs left `running` by a process that has gone since (so each opening of the
    labs screen does); while the services load, the bare catalogue."""
    from drill.labs.overview import LabsOverview

    overview = LabsOverview()
    if services is None:
        return overview, None
    return overview, overview.attach(services.decks, services.db)


def assemble_services(
    decks: DeckSet,
    db: Database,
    *,
    settings: Settings | None = None,
    deck_dirs: Iterable[Path] = (),
    now: Callable[[], datetime] = system_now,
    exercises_home: Path | None = None,
    notices: Iterable[str] = (),
) -> Services:
    """Services over decks and a database the caller already has (settings: settings.toml)."""
    if settings is None:
        from drill.settings import load_settings

        settings = load_settings()
    return Services(
        settings,
        decks,
        db,
        deck_dirs=list(deck_dirs),
        now=now,
        exercises_home=exercises_home,
        notices=list(notices),
    )


def load_services(
    deck_dirs: Iterable[Path] = (),
    *,
    include_bundled: bool = True,
    settings: Settings | None = None,
    now: Callable[[], datetime] = system_now,
) -> Services:
    """Validate the decks (refreshing the deck cache), open and migrate the database, and move
    the history of renamed cards (before any session reads the schedule). Touches no widgets:
    safe in a worker thread. DeckPathError for a missing --decks dir; storage's DatabaseError
    for a database that cannot be used."""
    from drill.database import open_app_database
    from drill.decks.loader import load_decks
    from drill.gc_pause import collector_paused
    from drill.review.history_merge import merge_replaced_history

    dirs = [Path(d) for d in deck_dirs]
    with collector_paused():  # a cold load builds every card's objects (issue 40)
        decks = load_decks(dirs, include_bundled=include_bundled)
    db = open_app_database()
    try:
        _report, notice = merge_replaced_history(decks, db)
    except BaseException:
        db.close()
        raise
    return assemble_services(
        decks, db, settings=settings, deck_dirs=dirs, now=now, notices=[notice] if notice else []
    )


class ServicesSlot:
    """Where the app's services arrive: empty during the first paint, then filled by the load
    (or settled empty when it failed). Screens that may open before the load take a slot and
    `await slot.wait()`; `put` may be called from the loading thread, `settle` on the loop's."""

    def __init__(self, services: Services | None = None) -> None:
        self._services = services
        self._settled = services is not None
        self._event: asyncio.Event | None = None

    @property
    def ready(self) -> Services | None:
        return self._services

    @property
    def settled(self) -> bool:
        return self._settled

    def put(self, services: Services) -> None:
        self._services = services

    def settle(self) -> None:
        self._settled = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> Services | None:
        """The services once the load has finished; None when it failed."""
        if not self._settled:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        return self._services
