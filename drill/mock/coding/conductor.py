"""Grading in the coding round, UI-free (as drill.labs' LabRunService is for labs): the one
implementation of "grade this round's train.py" and of "grade this file". The screen
(drill/tui/screens/coding_round.py), `drill mock watch` (drill.mock.coding.watch) and the CLI
(`drill mock grade`, `drill mock followups`) call these and only render what comes back; the
round's clock rules (when to grade what) are in drill.mock.coding.rules.

    graded = grade_round(session, ("skeleton",), grader=trainer_lab.grading.grade, record=log)
    graded.result, graded.number, graded.reused, graded.error, graded.notices

A round's grading: the notebook synced first (a notebook round grades round.ipynb as last
saved), the full grading of this very train.py shown again at the end instead of run again
(drill.mock.coding.regrade), else a new grades/<n> (n = the highest number there + 1, so a
missing folder never makes an existing one reused), the source's digest noted beside it, and the
grading recorded in the run log through `record`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from drill.mock.coding.notebook import find_train_cell
from drill.mock.coding.regrade import GRADES_DIR, remember_source, unchanged_full_grading
from drill.mock.coding.session import CodingSession
from drill.mock.errors import MockError
from drill.paths import new_numbered_dir, new_run_dir, runs_dir
from trainer_lab.grading import LAB, PHASES, Grading, ScriptError


class Grader(Protocol):
    """trainer_lab.grading.grade, or a test's stand-in: (script, out_dir, phases, **options) ->
    the grading's result.json as a mapping. Options (cancel, on_progress, seed) are passed only
    when given, so a stand-in takes just the ones its caller uses."""

    def __call__(
        self, script: Path, out_dir: Path, phases: tuple[str, ...], **options: Any
    ) -> Mapping[str, Any]: ...


# record(result, out_dir) -> notices: the run log (a failure to write is a notice, not an error)
Record = Callable[[Mapping[str, Any], Path], Iterable[str]]


@dataclass(frozen=True)
class RoundGrading:
    """What a round's grading came to. `result` is None when it failed (`error` says why)."""

    phases: tuple[str, ...]
    result: Mapping[str, Any] | None = None
    out_dir: Path | None = None
    reused: bool = False  # the full grading of this very train.py, shown again, not run again
    notebook_problem: str | None = None  # round.ipynb could not be read (the last train.py ran)
    notices: tuple[str, ...] = ()  # from the run log
    error: str | None = None  # "OSError: no space left on device"

    @property
    def number(self) -> int | None:
        """n of grades/<n>."""
        return int(self.out_dir.name) if self.out_dir is not None else None


def _options(**given: Any) -> dict[str, Any]:
    return {name: value for name, value in given.items() if value is not None}


def grade_round(
    session: CodingSession,
    phases: tuple[str, ...],
    *,
    grader: Grader,
    record: Record | None = None,
    cancel: threading.Event | None = None,
) -> RoundGrading:
    """Grade the round's train.py against `phases` (see the module's text). Never raises for
    the user's file or the grader: a failed grading is `error`, and the clock goes on."""
    problem = session.sync_from_notebook() if session.notebook_path is not None else None
    if session.finished and set(phases) == set(session.all_grader_phases):
        reused = unchanged_full_grading(session)
        if reused is not None:  # the pushback's grading ran this very file
            number, result = reused
            out_dir = session.folder / GRADES_DIR / str(number)
            return RoundGrading(phases, result, out_dir, reused=True, notebook_problem=problem)
    source = session.code()
    try:
        out_dir = new_numbered_dir(session.folder / GRADES_DIR)  # this grading's alone
        result = grader(session.script, out_dir, phases, **_options(cancel=cancel))
    except Exception as error:  # the user's file or the grader: said in a line
        return RoundGrading(phases, notebook_problem=problem, error=_said(error))
    remember_source(out_dir, source)
    notices = tuple(record(result, out_dir)) if record is not None else ()
    return RoundGrading(phases, result, out_dir, notebook_problem=problem, notices=notices)


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass(frozen=True)
class FileGrading:
    """`drill mock grade FILE`: the grading, where it is, and the notebook cell graded."""

    grading: Grading
    out_dir: Path
    cell: str | None = None  # "cell 3 of 9 in r.ipynb (...)" when FILE is a notebook
    notices: tuple[str, ...] = ()


def grader_phases(chosen: list[str] | None) -> list[str]:
    """--phase as given (default: every grader phase); an unknown one is a MockError."""
    phases = list(chosen or PHASES)
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise MockError(f"unknown phase {unknown[0]!r}; phases: {', '.join(PHASES)}")
    return phases


def check_file(path: Path) -> None:
    """A script must exist; a notebook is read later (its own errors say what is wrong)."""
    if not _is_notebook(path) and not path.is_file():
        raise MockError(f"no such file: {path}")


def _is_notebook(path: Path) -> bool:
    return path.suffix.lower() == ".ipynb"


def prepare_file(path: Path) -> tuple[Path, Path, str | None]:
    """A new run folder for grading FILE, the script to run (FILE, or the notebook's train.py
    cell written out as out_dir/notebook/train.py: the notebook itself is never run) and the
    cell's description."""
    check_file(path)
    out_dir = new_run_dir(runs_dir(), LAB)
    if not _is_notebook(path):
        return out_dir, path, None
    cell = find_train_cell(path)
    script = out_dir / "notebook" / "train.py"
    try:
        script.parent.mkdir(parents=True)
        script.write_text(cell.source, encoding="utf-8")
    except OSError as error:
        raise MockError(f"cannot write {script}: {error.strerror or error}") from None
    where = (
        f"cell {cell.number} of {cell.cells} in {path} ({cell.magic}; train.py line 1 is the "
        f"cell's line {cell.first_line})"
    )
    return out_dir, script, where


def grade_file(
    prepared: tuple[Path, Path, str | None],
    phases: list[str],
    *,
    grader: Grader,
    record: Record | None = None,
    on_progress: Callable[[str], None] | None = None,
    seed: int | None = None,
) -> FileGrading:
    """Grade a file prepared by `prepare_file`; the script's own refusal (not Python, too
    large) is a MockError. `seed` draws the fault plan (the same seed, the same kills)."""
    out_dir, script, cell = prepared
    options = _options(on_progress=on_progress, seed=seed)
    try:
        grading = grader(script, out_dir, phases, **options)
    except ScriptError as error:
        raise MockError(str(error)) from None
    notices = tuple(record(grading, out_dir)) if record is not None else ()
    return FileGrading(grading, out_dir, cell, notices)  # type: ignore[arg-type]
