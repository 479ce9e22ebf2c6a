"""What the CLI and the exercise screens do with exercises (UI-free).

    service = ExerciseService(db, home=drill_home() / "exercises", decks=decks)
    service.start("ddp-by-hand")          # copies the starter to home/ddp-by-hand/sync.py
    outcome = service.check("ddp-by-hand")

The user's file is only ever run by the checker, in the harness's sandboxed subprocess; this
module copies, reads and diffs it as text. Solving an exercise rates the cards that link it
(`exercise: NAME`) once: Again if the solution was viewed first, Hard after hints or failed
checks, Good on the first try; by the rule for ratings from outside review (drill.review.outside:
a new card is not rated, a card not due is logged only), and the outcome says per card which.
"""

from __future__ import annotations

import difflib
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from drill.errors import DrillError
from drill.exercises.progress import Progress, ProgressStore
from drill.files import Decoded, FileRefused, decode_text, read_regular
from drill.review.ratings import RATING_NAMES as RATING_NAMES  # re-exported: the CLI, the screen
from drill.runs.log import EXERCISE
from drill.runs.recorder import RunRecorder
from trainer_lab.exercises.catalogue import EXERCISES, UnknownExerciseError, get_exercise
from trainer_lab.exercises.spec import ExerciseSpec

if TYPE_CHECKING:
    from drill.decks.loader import DeckSet
    from drill.review.outside import CardChange
    from storage.db import Database
    from trainer_lab.result import LabResult

AGAIN, HARD, GOOD = 1, 2, 3
# rate(card_id, deck_id, rating) -> what changed: the review screen passes one that rates
# through its session
RateCard = Callable[[str, str, int], "CardChange"]


class ExerciseError(DrillError):
    """A usage error: unknown exercise, not started, solution still locked."""


@dataclass(frozen=True)
class ExerciseInfo:
    spec: ExerciseSpec
    progress: Progress
    path: Path  # the user's file (may not exist yet)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def status(self) -> str:
        return self.progress.status

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.spec.title,
            "topic": self.spec.topic,
            "status": self.status,
            "attempts": self.progress.attempts,
            "hints_shown": self.progress.hints_shown,
            "hints_total": len(self.spec.hints),
            "solution_viewed": self.progress.solution_viewed,
            "world_size": self.spec.world_size,
            "path": str(self.path),
        }


@dataclass
class CheckOutcome:
    result: LabResult
    solved: bool
    rating: int | None = None  # given to the linked cards on this solve (None: none rated)
    changes: list[CardChange] = field(default_factory=list)  # per linked card, what it did
    notices: list[str] = field(default_factory=list)

    @property
    def rated_cards(self) -> list[str]:
        """The linked cards whose review was written (rescheduled or logged)."""
        return [change.card_id for change in self.changes if change.changed]


def rating_for(before: Progress) -> int:
    """The linked card's rating for a solve that follows `before`."""
    if before.solution_viewed:
        return AGAIN
    if before.hints_shown or before.attempts:
        return HARD
    return GOOD


class ExerciseService:
    def __init__(self, db: Database | None, home: Path, decks: DeckSet | None = None) -> None:
        self.store = ProgressStore(db) if db is not None else None
        self.db = db
        self.home = home
        self.decks = decks

    # --- catalogue -------------------------------------------------------------------------
    def spec(self, name: str) -> ExerciseSpec:
        try:
            return get_exercise(name)
        except UnknownExerciseError as error:
            raise ExerciseError(str(error)) from None

    def progress(self, name: str) -> Progress:
        return self.store.get(name) if self.store else Progress(name)

    def user_file(self, name: str) -> Path:
        spec = self.spec(name)
        return self.home / spec.name / spec.file

    def info(self, name: str) -> ExerciseInfo:
        return ExerciseInfo(self.spec(name), self.progress(name), self.user_file(name))

    def list(self) -> list[ExerciseInfo]:
        every = self.store.all() if self.store else {}
        return [
            ExerciseInfo(spec, every.get(name, Progress(name)), self.user_file(name))
            for name, spec in EXERCISES.items()
        ]

    # --- workflow --------------------------------------------------------------------------
    def start(self, name: str) -> tuple[Path, bool]:
        """(the user's file, whether it was created now); an existing file is kept."""
        spec = self.spec(name)
        path = self.user_file(name)
        created = not path.exists()
        if created:
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(spec.starter_path, path)
        if self.store:
            self.store.started(name)
        return path, created

    def _started_file(self, name: str) -> Path:
        path = self.user_file(name)
        if not path.is_file():
            raise ExerciseError(f"exercise {name} is not started: drill exercise start {name}")
        return path

    def check(
        self, name: str, cancel: threading.Event | None = None, rate: RateCard | None = None
    ) -> CheckOutcome:
        from drill.paths import new_run_dir
        from trainer_lab.exercises.runner import check_exercise
        from trainer_lab.usercode.source import ScriptError

        spec = self.spec(name)
        path = self._started_file(name)
        out_dir = new_run_dir(self.home / spec.name / "checks", "check")
        recorder = RunRecorder(EXERCISE, db=self.db, open_db=None) if self.db else None
        notices = []
        if recorder is not None:
            notices.append(recorder.start(spec.name, {}, spec.world_size, out_dir))
        try:
            result = check_exercise(spec, path, out_dir, cancel=cancel)
            if recorder is not None:
                notices.append(recorder.finish_result(result))
        except ScriptError as error:
            raise ExerciseError(str(error)) from None
        finally:
            if recorder is not None:
                recorder.close()  # no result: the check's row is closed as cancelled
        solved = result["status"] == "ok"
        outcome = CheckOutcome(result, solved, notices=[n for n in notices if n])
        if self.store is None or result["status"] == "cancelled":
            return outcome
        before = self.store.record_check(name, result)
        if solved and before.solved_at is None and before.rated is None:
            self._rate_cards(name, rating_for(before), outcome, rate)
        return outcome

    def _rate_cards(
        self, name: str, rating: int, outcome: CheckOutcome, rate: RateCard | None
    ) -> None:
        if self.decks is None or self.db is None or self.store is None:
            return
        from drill.review.outside import rate_from_outside

        db = self.db
        cards = [
            (loaded.deck.deck, card)
            for loaded in self.decks.decks
            for card in loaded.deck.cards
            if card.exercise == name
        ]
        for deck_id, card in cards:
            try:
                if rate is not None:
                    change = rate(card.id, deck_id, rating)
                else:
                    change = rate_from_outside(db, card.id, deck_id, rating,
                                               content_hash=card.content_hash())  # fmt: skip
            except Exception as error:  # the solve stays recorded; say why the card is not
                outcome.notices.append(f"card {card.id} not rated: {error}")
                continue
            outcome.changes.append(change)
        if outcome.rated_cards:
            outcome.rating = rating
            self.store.set_rated(name, rating)

    def next_hint(self, name: str) -> tuple[int, str]:
        """(hint number, text): the next hint not shown yet, or the last one again."""
        spec = self.spec(name)
        shown = self.progress(name).hints_shown
        number = min(shown + 1, len(spec.hints))
        if self.store:
            self.store.hint_shown(name, number)
        return number, spec.hints[number - 1]

    def solution(self, name: str, diff: bool = False) -> str:
        """The model answer (or a unified diff from the user's file to it); only after a check."""
        spec = self.spec(name)
        if self.progress(name).attempts == 0:
            raise ExerciseError(
                f"the solution opens after a check: drill exercise check {name} first"
            )
        if self.store:
            self.store.solution_viewed(name)
        answer = spec.solution_path.read_text()
        if not diff:
            return answer
        mine = self._user_text(name)
        lines = difflib.unified_diff(
            mine.text.splitlines(keepends=True),
            answer.splitlines(keepends=True),
            fromfile=f"yours/{spec.file}",
            tofile=f"solution/{spec.file}",
        )
        found = "".join(_capped_diff(lines, self.user_file(name)))
        notice = mine.notice.split(";")[0] if mine.notice else None  # how it is shown
        return f"note: {notice}\n{found}" if notice and found else found

    def _user_text(self, name: str) -> Decoded:
        """The user's file as text for a diff: read bounded (a check refuses a larger one too),
        never waited on (a FIFO is refused); not UTF-8 is decoded by drill.files' one rule and
        said. A missing file is empty."""
        from trainer_lab.usercode.source import MAX_SCRIPT_BYTES

        path = self.user_file(name)
        try:
            data = read_regular(path, MAX_SCRIPT_BYTES)
        except FileNotFoundError:
            return Decoded("")
        except FileRefused as error:
            raise ExerciseError(f"no diff: {error}") from None
        return decode_text(data, path.name)


MAX_DIFF_LINES = 2000  # a diff longer than this is cut, with a line saying so
MAX_DIFF_CHARS = 256 * 1024


def _capped_diff(lines: Iterable[str], path: Path) -> Iterator[str]:
    """The diff's lines up to MAX_DIFF_LINES and MAX_DIFF_CHARS, then one line saying it was cut."""
    chars = 0
    for count, line in enumerate(lines):
        chars += len(line)
        if count == MAX_DIFF_LINES or chars > MAX_DIFF_CHARS:
            yield f"... diff cut after {count} lines: your file ({path}) differs further\n"
            return
        yield line if line.endswith("\n") else f"{line}\n"
