"""Record a coding-round grading in the run log (kind "coding"), so it is listed with the lab
runs: the Labs screen shows a `mock-coding` row with its past gradings, each reopenable.

The log is a convenience next to the result itself: a database that cannot be opened or written
only costs a notice, never the grading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drill.database import Database


def record_grading(
    result: Mapping[str, Any],
    out_dir: Path,
    notify: Callable[[str], None],
    *,
    db: Database | None = None,
) -> None:
    """One call of the run recorder (kind "coding"); `db` None: open the app's database."""
    from drill.runs.recorder import RunRecorder
    from trainer_lab.result import ResultFormatError, parse_result

    try:
        graded = parse_result(dict(result))
    except ResultFormatError as error:
        notify(f"drill lab: notice: this grading is not recorded in the lab history: {error}")
        return
    recorder = RunRecorder(
        "coding", db=db, notify=lambda line: notify(f"drill lab: notice: {line}")
    )
    recorder.record(graded, out_dir, claims=[], observed_choice=None)
