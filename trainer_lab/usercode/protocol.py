"""Names shared by the launcher side and the bootstrap (torch-free): environment variables that
configure the observation and the faults, and the files a run's observe/ directory holds."""

from __future__ import annotations

from pathlib import Path

OBSERVE_ENV = "DRILL_OBSERVE_DIR"  # where the bootstrap writes what it saw
CKPT_ENV = "DRILL_CKPT_DIR"  # saves and renames into this directory are recorded (and torn)
KILL_RANK_ENV = "DRILL_KILL_RANK"  # with KILL_AFTER_ENV: SIGKILL this rank ...
KILL_AFTER_ENV = "DRILL_KILL_AFTER_STEP"  # ... right after its optimizer step number N
TEAR_AFTER_ENV = "DRILL_TEAR_SAVE_AFTER_STEP"  # the first checkpoint save after step N is torn

OBSERVE_DIR = "observe"
# The given files (package data, torch code run only in the graded subprocesses, never imported
# by the app): the dataset module, the starter, the model answer and its broken variants.
GIVEN_FILES = Path(__file__).parent / "files"
DATASET_MODULE = "drill_data"  # the given dataset module; its `_on_fetch` hook records ids


def steps_file(rank: int) -> str:
    """One JSON line per optimizer step: pstep, pre/post parameter and gradient summaries."""
    return f"steps-rank{rank}.jsonl"


def fetch_file(rank: int) -> str:
    """One JSON line per dataset fetch: pstep (optimizer steps done so far), id, pid."""
    return f"fetch-rank{rank}.jsonl"


def saves_file(rank: int) -> str:
    """One JSON line per torch.save / rename into the checkpoint dir (and per torn save)."""
    return f"saves-rank{rank}.jsonl"


def stack_file(rank: int, pid: int) -> str:
    """faulthandler's dump of every thread, written when the launcher sends SIGUSR1."""
    return f"stack-rank{rank}-{pid}.txt"


def pid_file(rank: int, pid: int) -> str:
    return f"pid-rank{rank}-{pid}"
