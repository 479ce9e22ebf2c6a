"""Names shared by the launcher side and the bootstrap (torch-free): environment variables that
configure the observation and the faults, and the files a run's observe/ directory holds."""

from __future__ import annotations

ENV_PREFIX = "DRILL_"  # every variable of this protocol starts with it
OBSERVE_ENV = "DRILL_OBSERVE_DIR"  # where the bootstrap writes what it saw
CKPT_ENV = "DRILL_CKPT_DIR"  # saves and renames into this directory are recorded (and torn)
KILL_RANK_ENV = "DRILL_KILL_RANK"  # with KILL_AFTER_ENV: SIGKILL this rank ...
KILL_AFTER_ENV = "DRILL_KILL_AFTER_STEP"  # ... right after its optimizer step number N
TEAR_AFTER_ENV = "DRILL_TEAR_SAVE_AFTER_STEP"  # the first checkpoint save after step N is torn
# File-level tear (fswatch.py): after optimizer step N (TEAR_WRITE_AFTER_ENV), the K-th file this
# rank writes into the checkpoint dir (TEAR_WRITE_ENV; on rank TEAR_RANK_ENV only, when set) is
# cut to half its bytes as it is closed, and the process is SIGKILLed.
TEAR_WRITE_AFTER_ENV = "DRILL_TEAR_WRITE_AFTER_STEP"
TEAR_WRITE_ENV = "DRILL_TEAR_WRITE"
TEAR_RANK_ENV = "DRILL_TEAR_RANK"
# Preemption (sigterm.py): SIGTERM to every rank, as a scheduler's notice: rank TERM_FIRST_ENV
# gets it right after its optimizer step N (TERM_AFTER_ENV), every other rank at its first
# observed action after its step N + TERM_LATE_BY_ENV (0 when unset; a dataset read, a collective,
# an optimizer step, a checkpoint write, or the script's end): a step or more later than the first
# where a rank does not stop. With TERM_AGAIN_ENV (any value) a second SIGTERM comes midway through
# each rank's first write into the checkpoint dir after its first (half the bytes on disk), by
# whatever means it writes (torch.save to a path, a file object, os.write).
TERM_AFTER_ENV = "DRILL_TERM_AFTER_STEP"
TERM_FIRST_ENV = "DRILL_TERM_FIRST_RANK"
TERM_AGAIN_ENV = "DRILL_TERM_AGAIN_DURING_SAVE"
TERM_LATE_BY_ENV = "DRILL_TERM_LATE_BY_STEPS"
# how a term record's "why" starts for the second SIGTERM, sent midway through a save
TERM_DURING_SAVE = "during the save"
# Which samples the given dataset serves (dataplan.DataPlan as JSON): the seed the grader drew for
# this launch, and for a reference or a relaunch the run whose fetches decide what is served. The
# bootstrap reads it and removes it (with the other variables of this protocol, for a coding-round
# script) before the script runs: nothing the script can read says which launch it is.
DATA_ENV = "DRILL_DATA"
# The extra observation of probes.py, when set (any value): backward passes, forward dtypes.
PROBES_ENV = "DRILL_PROBES"
# With PROBES_ENV: the first backward after N-1 optimizer steps leaves an inf gradient (probes.py).
INF_AT_ENV = "DRILL_INF_AT_STEP"
# Every dropout acts as the identity in this launch (dropout.py)
NO_DROPOUT_ENV = "DRILL_NO_DROPOUT"
# The flight recorder's ring (entries) in multi-rank gradings (usercode/comms.py): a step with
# more collectives than this between its forward and its optimizer step cannot be read back.
FR_BUFFER = 64

OBSERVE_DIR = "observe"
# A module of this name in the workspace is the given dataset (the coding round ships one,
# trainer_lab/grading/files/drill_data.py): the bootstrap replaces its `_fetch` reader with the
# recorder's, which records each id read and serves the values the launch's DataPlan says.
DATASET_MODULE = "drill_data"


def steps_file(rank: int) -> str:
    """One JSON line per optimizer step: pstep, pre/post parameter and gradient summaries."""
    return f"steps-rank{rank}.jsonl"


def fetch_file(rank: int) -> str:
    """One JSON line per dataset fetch: pstep (optimizer steps done so far), id, pid."""
    return f"fetch-rank{rank}.jsonl"


def tokens_file(rank: int) -> str:
    """One JSON line per forward of the token embedding, where the token remap is on
    (token_remap.py): pstep, the real (amino-acid) tokens it read, the ids it read that are
    neither real nor the launch's PAD_ID, the ids it read in all (slots), its rows and whether
    gradients were on (grad)."""
    return f"tokens-rank{rank}.jsonl"


def losses_file(rank: int) -> str:
    """One JSON line per backward pass from a (plain tensor) scalar, in every launch that has a
    dataset module (token_remap.py): pstep, the scalar's value (the loss the rank trained on)."""
    return f"losses-rank{rank}.jsonl"


def saves_file(rank: int) -> str:
    """One JSON line per torch.save / file write / fsync / rename into the checkpoint dir (and per
    torn save)."""
    return f"saves-rank{rank}.jsonl"


def optimizer_file(rank: int) -> str:
    """One JSON line per outermost optimizer step: class, learning rates, state digest before."""
    return f"optimizer-rank{rank}.jsonl"


def probes_file(rank: int) -> str:
    """One JSON line per backward pass and per optimizer step (probes.py), when asked for."""
    return f"probes-rank{rank}.jsonl"


def term_file(rank: int) -> str:
    """One JSON line per SIGTERM the preemption fault sent this rank: pstep, time, why."""
    return f"term-rank{rank}.jsonl"


def workers_file(rank: int) -> str:
    """One JSON line per change in a DataLoader's worker processes (loader_workers.py): event
    `start` (launched), `ready` (their first batch handed over), `stop` (being shut down) or
    `stopped`; pstep, time. Starting workers (spawn imports torch again) and stopping them (torch
    joins each for up to 5 s) are the script's work, not a wait on another rank (stall.py)."""
    return f"workers-rank{rank}.jsonl"


WORKER_EVENTS_OPEN = ("start", "stop")  # the events a rank is still inside until the next one


def end_file(rank: int) -> str:
    """Written when the script returned (its exit code): a crash after it is in the teardown."""
    return f"end-rank{rank}.json"


def crash_file(rank: int, pid: int) -> str:
    """faulthandler's dump on a fatal signal (SIGABRT, SIGSEGV): where each thread was."""
    return f"crash-rank{rank}-{pid}.txt"


def stack_file(rank: int, pid: int) -> str:
    """faulthandler's dump of every thread, written when the launcher sends SIGUSR1."""
    return f"stack-rank{rank}-{pid}.txt"


TEARDOWN_S = 5.0  # after destroy_process_group, how long a rank may take to return (teardown.py)


def teardown_file(rank: int, pid: int) -> str:
    """Where each thread was when a rank that had destroyed its process group was still not
    done TEARDOWN_S later and was ended (teardown.py)."""
    return f"teardown-rank{rank}-{pid}.txt"


def pid_file(rank: int, pid: int) -> str:
    return f"pid-rank{rank}-{pid}"
