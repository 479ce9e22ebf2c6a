"""Past coding rounds, for `drill mock history`, `drill mock list` and the stats (`drill stats`
and the stats screen, both through stats_with_rounds): text rounds live in the database
(drill.mock.store), coding rounds as folders DRILL_HOME/rounds/<id>/ (their clock in
state.json, their gradings in grades/<n>/result.json).

    rows = coding_history(default_rounds_dir())    # newest first
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.mock.coding.session import CODING_PHASES, CodingSession, default_rounds_dir
from drill.mock.errors import MockError
from trainer_lab.grading import DATASET_MODULE_FILE, SCRIPT_NAME

if TYPE_CHECKING:
    from drill.review.stats import Stats

CODING_TITLE = "Standard round — write train.py, graded under torchrun"


@dataclass(frozen=True)
class CodingRow:
    id: int
    started_at: datetime  # UTC: when the round's folder was set up
    notebook: bool
    finished: bool
    phase: int  # the phase it is in (1-based)
    held: int | None  # checks that held in the latest grading of each; None: never graded
    total: int | None

    @property
    def kind(self) -> str:
        return "notebook" if self.notebook else "coding"

    def result(self) -> str:
        """ "12/15 checks hold" / "not graded", and where an unfinished round stands."""
        graded = f"{self.held}/{self.total} checks hold" if self.total else "not graded"
        if self.finished:
            return graded
        return f"unfinished, phase {self.phase}/{len(CODING_PHASES)}, {graded}"


def _started(folder: Path) -> datetime:
    # drill_data.py is copied in when the round is set up and never written again
    for path in (folder / DATASET_MODULE_FILE, folder):
        try:
            return datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except OSError:
            continue
    return datetime.fromtimestamp(0, UTC)


def coding_history(rounds_dir: Path, limit: int = 50) -> list[CodingRow]:
    """The coding rounds under rounds_dir, newest first."""
    from drill.mock.coding.report import grade_results, latest_checks

    if not rounds_dir.is_dir():
        return []
    numbers = sorted((int(p.name) for p in rounds_dir.glob("*") if p.name.isdigit()), reverse=True)
    rows = []
    for number in numbers[:limit]:
        folder = rounds_dir / str(number)
        if not (folder / SCRIPT_NAME).is_file():
            continue
        try:
            session = CodingSession(folder)
        except MockError:  # a prompt this drill does not know (a newer drill's round): not listed
            continue
        checks = latest_checks(grade_results(folder))
        held = sum(1 for c in checks.values() if c["passed"])
        rows.append(
            CodingRow(
                id=number,
                started_at=_started(folder),
                notebook=session.notebook_path is not None,
                finished=session.finished,
                phase=session.clock.phase + 1,
                held=held if checks else None,
                total=len(checks) if checks else None,
            )
        )
    return rows


def stats_with_rounds(decks: Any, db_path: Path, settings: Any, now: datetime) -> Stats:
    """The stats of the stats screen and `drill stats`, with the coding and notebook rounds
    (DRILL_HOME/rounds) beside the talk rounds: one source for both."""
    from drill.review.stats import CodingRoundResult, stats_for

    rounds = [
        CodingRoundResult(row.id, row.kind, row.started_at, row.finished, row.held, row.total)
        for row in coding_history(default_rounds_dir())
    ]
    return stats_for(decks, db_path, settings, now, coding_rounds=rounds)
