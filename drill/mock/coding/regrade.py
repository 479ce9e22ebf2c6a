"""Whether the round's end must grade everything again: not when train.py is byte for byte what
the last full grading (the pushback phase's) ran. Each grading's out_dir gets the SHA-256 of the
source it was started on (`remember_source`); at the end `unchanged_full_grading` finds the
latest full grading and compares. A full grading takes minutes of the user's CPU; running it
again on the same file would only repeat its verdicts.

    source = session.code()
    result = grade(session.script, out_dir, phases)
    remember_source(out_dir, source)
    ...
    reused = unchanged_full_grading(session)      # (its number, its result) or None
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from pathlib import Path

from drill.mock.coding.session import CodingSession, read_text
from trainer_lab.grading import PHASES
from trainer_lab.result import LabResult, read_result

SOURCE_DIGEST_FILE = "source.sha256"
GRADES_DIR = "grades"


def gradings(folder: Path) -> list[tuple[int, LabResult]]:
    """The round's readable gradings, (number, result), in the order they ran (a result.json
    read with a bound, a FIFO refused: trainer_lab.result.read_result)."""
    grades = folder / GRADES_DIR
    if not grades.is_dir():
        return []
    numbers = sorted(int(p.name) for p in grades.iterdir() if p.name.isdigit() and p.name.isascii())
    found = ((n, read_result(grades / str(n))) for n in numbers)
    return [(n, r) for n, r in found if r is not None]


def is_full(result: LabResult, phases: Iterable[str] = PHASES) -> bool:
    """The grading ran every grader phase of the round (the pushback's, the end's): `phases`,
    the round's prompt's (today's DDP round's by default)."""
    families = {str(c.get("name", "")).split(".", 1)[0] for c in result["checks"]}
    return set(phases) <= families


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def remember_source(out_dir: Path, source: str) -> None:
    """Note which source a grading ran (a failure to write only costs the reuse later)."""
    with contextlib.suppress(OSError):
        (out_dir / SOURCE_DIGEST_FILE).write_text(source_digest(source) + "\n")


def unchanged_full_grading(session: CodingSession) -> tuple[int, LabResult] | None:
    """The latest grading that ran every grader phase to the end, when it ran the code that is
    in train.py now; else None (changed code, a cancelled grading, no digest)."""
    everything = session.all_grader_phases
    full = [(n, r) for n, r in gradings(session.folder) if is_full(r, everything)]
    if not full:
        return None
    number, result = full[-1]
    if result.get("status") == "cancelled":
        return None
    stored = read_text(session.folder / GRADES_DIR / str(number) / SOURCE_DIGEST_FILE, 1024)
    if stored is None or stored.strip() != source_digest(session.code()):
        return None
    return number, result


def end_grading_text(session: CodingSession) -> str:
    """What the round's end does about grading, in words for "The round is over: ...": every
    check runs, or the full grading of this very train.py stands (one message, never both)."""
    reused = unchanged_full_grading(session)
    if reused is None:
        return "all checks run now"
    return f"train.py is unchanged since grading {reused[0]}, so its verdicts stand"
