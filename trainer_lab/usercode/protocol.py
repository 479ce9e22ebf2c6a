"""Names shared by the launcher side and the bootstrap (torch-free): environment variables that
configure the observation and the faults, and the files a run's observe/ directory holds."""

from __future__ import annotations

OBSERVE_ENV = "DRILL_OBSERVE_DIR"  # where the bootstrap writes what it saw
CKPT_ENV = "DRILL_CKPT_DIR"  # saves and renames into this directory are recorded (and torn)
KILL_RANK_ENV = "DRILL_KILL_RANK"  # with KILL_AFTER_ENV: SIGKILL this rank ...
KILL_AFTER_ENV = "DRILL_KILL_AFTER_STEP"  # ... right after its optimizer step number N
TEAR_AFTER_ENV = "DRILL_TEAR_SAVE_AFTER_STEP"  # the first checkpoint save after step N is torn

OBSERVE_DIR = "observe"
# A module of this name in the workspace is the given dataset (the coding round ships one,
# trainer_lab/grading/files/drill_data.py): the bootstrap sets its `_on_fetch` hook to record ids.
DATASET_MODULE = "drill_data"


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
