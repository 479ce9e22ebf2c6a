"""A coding round on disk: DRILL_HOME/rounds/<id>/ holds train.py (the user's file), notes.md,
drill_data.py (the given module), state.json (the phase clock, the pushback questions) and
snapshots/<phase>.py (train.py as it stood when each phase ended), so a round survives a crash
and `drill mock resume` can pick it up. Writes are atomic (temp file, then rename); reads go
through drill.files.read_regular with a bound (a FIFO or a link to a device there is refused,
never waited on or read without end: the file then reads as empty).

In notebook mode the folder also holds round.ipynb (drill.mock.coding.notebook): the user edits the
notebook in Jupyter or VS Code, and `sync_from_notebook()` writes the train.py its
`%%writefile train.py` cell holds, which is what gets graded.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drill.files import FileRefused, read_regular
from drill.mock.clock import ClockState, RoundClock, Status
from drill.mock.coding.catalogue import RoundPrompt, round_prompt
from drill.mock.coding.notebook import extract_train_py, notes_cell_text, write_round_notebook
from drill.mock.coding.phases import CODING_PHASES, CodingPhase  # noqa: F401 (re-exported)
from drill.mock.errors import MockError
from drill.paths import new_numbered_dir
from trainer_lab.grading import DATASET_MODULE_FILE, DEFAULT_PROMPT, SCRIPT_NAME

STATE_FILE = "state.json"
NOTES_FILE = "notes.md"
NOTEBOOK_FILE = "round.ipynb"
SNAPSHOTS_DIR = "snapshots"
MAX_STATE_BYTES = 1024**2  # state.json: a clock, a few questions
MAX_TEXT_BYTES = 4 * 1024**2  # train.py, notes.md, a snapshot: far above what a round writes


def default_rounds_dir() -> Path:
    from drill.paths import drill_home

    return drill_home() / "rounds"


def read_text(path: Path, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    """A file of the round folder as text; None when it is missing, not a regular file, larger
    than max_bytes or not UTF-8."""
    try:
        return read_regular(path, max_bytes).decode("utf-8")
    except (OSError, FileRefused, UnicodeDecodeError):
        return None


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


class CodingSession:
    def __init__(self, folder: Path, now: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.script = folder / SCRIPT_NAME
        self.notes_path = folder / NOTES_FILE
        state = self._read_state()
        # The round's prompt (drill.mock.coding.catalogue), kept in state.json so a resumed
        # round keeps it; a round from before the catalogue has none: today's DDP round.
        name = state.get("prompt", DEFAULT_PROMPT)
        self.prompt: RoundPrompt = round_prompt(name if isinstance(name, str) else "?")
        self.phases: tuple[CodingPhase, ...] = self.prompt.round_phases
        budgets = [p.minutes * 60.0 * state.get("scale", 1.0) for p in self.phases]
        clock_state = None
        if isinstance(state.get("clock"), dict):
            try:
                clock_state = ClockState.from_dict(state["clock"])
            except (KeyError, TypeError, ValueError):
                clock_state = None
        try:
            self.clock = RoundClock(budgets, now=now, state=clock_state)
        except ValueError:  # a state.json from another time table: start the clock over
            self.clock = RoundClock(budgets, now=now)
        self.scale = float(state.get("scale", 1.0))
        found = state.get("pushback")
        # The pushback phase's follow-up questions, chosen once (drill.mock.coding.pushback) and
        # kept for resume; entries of another shape (an older round's hard cards) are dropped.
        self.pushback: list[dict] = (
            [q for q in found if isinstance(q, dict) and isinstance(q.get("question"), str)]
            if isinstance(found, list)
            else []
        )
        source = state.get("pushback_from")  # the grading they were asked from (None: the code)
        self.pushback_from: int | None = source if isinstance(source, int) else None
        notebook = state.get("notebook")
        self._notebook = notebook if notebook == NOTEBOOK_FILE else None
        stretch = state.get("stretch")  # after the round: drill.mock.coding.stretch
        self.stretch: dict = stretch if isinstance(stretch, dict) else {}
        self.now = now

    @classmethod
    def create(
        cls,
        rounds_dir: Path,
        minutes: float | None = None,
        *,
        notebook: bool = False,
        prompt: str = DEFAULT_PROMPT,
        **kw,
    ) -> CodingSession:
        """A new round folder under rounds_dir (numbered after the highest one there) on the
        catalogue's `prompt` (its starter, dataset module and time table; MockError for an
        unknown one, before any folder is made); with `notebook`, round.ipynb beside train.py
        (MockError when it cannot be written)."""
        entry = round_prompt(prompt)
        folder = new_numbered_dir(rounds_dir)  # claimed atomically: two new rounds, two folders
        (folder / SCRIPT_NAME).write_text(entry.starter())
        (folder / NOTES_FILE).write_text("")
        (folder / DATASET_MODULE_FILE).write_text(entry.dataset())
        total = sum(p.minutes for p in entry.round_phases)
        scale = (minutes / total) if minutes else 1.0
        state: dict = {"scale": scale, "prompt": entry.id}
        if notebook:
            # its phases in scaled time
            write_round_notebook(folder / NOTEBOOK_FILE, scale, prompt=entry)
            state["notebook"] = NOTEBOOK_FILE
        _write_atomic(folder / STATE_FILE, json.dumps(state))
        return cls(folder, **kw)

    @classmethod
    def latest_unfinished(cls, rounds_dir: Path, **kw) -> CodingSession | None:
        """The highest-numbered round whose clock has not finished, or that is in the middle of
        a stretch phase after it (None if there is none)."""
        if not rounds_dir.is_dir():
            return None
        numbers = sorted(
            (int(p.name) for p in rounds_dir.glob("*") if p.name.isdigit()), reverse=True
        )
        for number in numbers:
            if (rounds_dir / str(number) / SCRIPT_NAME).is_file():
                try:
                    session = cls(rounds_dir / str(number), **kw)
                except MockError:  # a prompt this drill does not know: not offered
                    continue
                if not session.finished or session.in_stretch:
                    return session
        return None

    @property
    def finished(self) -> bool:
        """The round's own clock is over (a stretch phase may still run after it)."""
        return self.clock.status is Status.FINISHED

    @property
    def in_stretch(self) -> bool:
        """A stretch phase was started after the round and has not ended (drill.mock.coding.
        stretch keeps its state under "stretch" in state.json)."""
        current = self.stretch.get("current")
        return isinstance(current, str) and bool(current)

    def saved_at(self) -> float:
        """When the round was last saved (epoch seconds; 0 when its state file is unreadable)."""
        try:
            return (self.folder / STATE_FILE).stat().st_mtime
        except OSError:
            return 0.0

    @classmethod
    def latest(cls, rounds_dir: Path, **kw) -> CodingSession | None:
        numbers = [int(p.name) for p in rounds_dir.glob("*") if p.name.isdigit()]
        return cls(rounds_dir / str(max(numbers)), **kw) if numbers else None

    @property
    def round_id(self) -> int:
        return int(self.folder.name)

    @property
    def phase(self) -> CodingPhase:
        return self.phases[self.clock.phase]

    @property
    def pushback_index(self) -> int:
        """The pushback's round phase (the last)."""
        return self.prompt.pushback_index

    @property
    def all_grader_phases(self) -> tuple[str, ...]:
        """Every grader phase of the round's prompt: what the pushback and the end grade."""
        return self.prompt.all_grader_phases

    def grader(self, grade: Callable[..., Any]) -> Callable[..., Any]:
        """`grade` (trainer_lab.grading.grade, or a stand-in) for this round's prompt: told
        the prompt when it is not today's DDP round, so a DDP round calls it as before."""
        if self.prompt.id == DEFAULT_PROMPT:
            return grade
        return functools.partial(grade, prompt=self.prompt.id)

    def _read_state(self) -> dict:
        text = read_text(self.folder / STATE_FILE, MAX_STATE_BYTES)
        try:
            data = json.loads(text) if text is not None else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def code(self) -> str:
        return read_text(self.script) or ""

    def notes_file(self) -> str:
        """notes.md: where the app's notes pane and, outside a notebook round, the follow-up
        questions are written."""
        return read_text(self.notes_path) or ""

    def notes(self) -> str:
        """The round's notes, as graded: notes.md; in a notebook round, the notebook's notes
        cell and its follow-up questions' cell (where the pushback asks and the answers are
        written), notes.md only while the notebook holds nothing (a round resumed in the app)."""
        written = self.notes_file()
        path = self.notebook_path
        if path is None:
            return written

        try:
            cell = notes_cell_text(path)
        except MockError:
            return written
        return cell or written

    def save(self, code: str | None = None, notes: str | None = None) -> None:
        if code is not None:
            _write_atomic(self.script, code)
        if notes is not None:
            _write_atomic(self.notes_path, notes)
        state: dict = {
            "scale": self.scale,
            "clock": self.clock.state.to_dict(),
            "prompt": self.prompt.id,
        }
        if self.pushback:
            state["pushback"] = self.pushback
            state["pushback_from"] = self.pushback_from
        if self._notebook:
            state["notebook"] = self._notebook
        if self.stretch:
            state["stretch"] = self.stretch
        _write_atomic(self.folder / STATE_FILE, json.dumps(state))

    # --- the code as each phase left it ----------------------------------------------------------
    def snapshot(self, phase_index: int) -> None:
        """Keep train.py as it stands now as the code phase `phase_index` ended with."""
        self.snapshot_named(self.phases[phase_index].id)

    def snapshot_named(self, phase_id: str) -> None:
        """The same for a phase named by id (a stretch phase)."""
        folder = self.folder / SNAPSHOTS_DIR
        folder.mkdir(exist_ok=True)
        _write_atomic(folder / f"{phase_id}.py", self.code())

    def phase_code(self, phase_id: str) -> str | None:
        """train.py as the phase ended (None: the phase has not ended yet)."""
        return read_text(self.folder / SNAPSHOTS_DIR / f"{phase_id}.py")

    # --- notebook mode ----------------------------------------------------------------------------
    @property
    def notebook_path(self) -> Path | None:
        """round.ipynb in a notebook round, else None."""
        return self.folder / self._notebook if self._notebook else None

    def sync_from_notebook(self) -> str | None:
        """Write the train.py the notebook's `%%writefile train.py` cell holds (only when it
        changed); a one-line problem (no such cell, not a notebook) or None."""
        path = self.notebook_path
        if path is None:
            return None

        try:
            source = extract_train_py(path)
        except MockError as error:
            return " ".join(str(error).split())
        if source != self.code():
            _write_atomic(self.script, source)
        return None
