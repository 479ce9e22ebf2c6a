"""Start a trainer_lab process warm or cold: the one place that decides (torch-free).

    proc = start_process(Job("trainer_lab.driver", args, env, cwd), stdout=log, stderr=log)

Which path runs (TRAINER_LAB_LAUNCHER in the caller's environment):
- `torchrun`: always cold, `python -m MODULE ARGS` (torchrun itself for a launch);
- `warm`: from the warm server (or, inside a warm process, forked from it);
- `auto` (the default): warm on a machine without NVIDIA GPUs, cold where there are (the warm
  path forks ranks, and CUDA cannot be used in a fork of a process that initialised it; the GPU
  path has not been measured warm yet).
A job whose environment changes what an interpreter reads at start (PYTHONPATH, the hash seed,
torch's compile and logging switches) runs cold, since a fork would not see it; so does any job
when the warm server cannot start. `TORCHRUN` names torchrun: warm, the agent runs in its place.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

from trainer_lab.containment import CONTAIN_ENV
from trainer_lab.procs import Waitable
from trainer_lab.warm.client import WarmServerError, default_server
from trainer_lab.warm.job import Job, in_warm_process, start_local

LAUNCHER_ENV = "TRAINER_LAB_LAUNCHER"
TORCHRUN = "trainer_lab._torchrun"
AGENT = "trainer_lab.warm.agent"
Mode = Literal["warm", "torchrun"]

# Read once at interpreter start (or at torch's import): a fork would not see a new value.
_STARTUP_VARS = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONWARNINGS",
    "PYTHONOPTIMIZE",
    "PYTHONDEVMODE",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "MKL_NUM_THREADS",
    "TORCH_LOGS",
)
_STARTUP_PREFIXES = ("TORCHDYNAMO_", "TORCHINDUCTOR_", "TORCH_COMPILE", "PYTORCH_JIT")


def has_nvidia_gpu() -> bool:
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return False
    return Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia/gpus").is_dir()


def default_mode() -> Mode:
    chosen = os.environ.get(LAUNCHER_ENV, "auto").strip().lower()
    if chosen in ("torchrun", "cold"):
        return "torchrun"
    if chosen == "warm":
        return "warm"
    return "torchrun" if has_nvidia_gpu() or not hasattr(os, "fork") else "warm"


def startup_differs(env: dict[str, str], base: dict[str, str]) -> list[str]:
    """The start-up variables env sets otherwise than base (the warm server's environment)."""
    names = set(_STARTUP_VARS) | {k for k in (*env, *base) if k.startswith(_STARTUP_PREFIXES)}
    return sorted(n for n in names if env.get(n) != base.get(n))


def cold_command(job: Job) -> list[str]:
    """`python -m MODULE ARGS`; a contained job's through trainer_lab.containment, which keeps
    its tree."""
    if CONTAIN_ENV in job.env:
        return [sys.executable, "-m", "trainer_lab.containment", job.module, *job.args]
    return [sys.executable, "-m", job.module, *job.args]


def start_process(
    job: Job,
    stdout: int,
    stderr: int | None = None,
    mode: Mode | None = None,
) -> Waitable:
    """Start job (module TORCHRUN means torchrun) warm or cold; stdin is /dev/null, stderr None
    joins stdout, the process leads a session of its own either way."""
    chosen = mode or default_mode()
    err = stdout if stderr is None else stderr
    if chosen == "warm" and not startup_differs(job.env, dict(os.environ)):
        warm_job = Job(AGENT if job.module == TORCHRUN else job.module, job.args, job.env, job.cwd)
        with open(os.devnull, "rb") as devnull:
            if in_warm_process():
                return start_local(warm_job, devnull.fileno(), stdout, err)
            server = default_server()
            if server is not None:
                try:
                    return server.spawn(warm_job, devnull.fileno(), stdout, err)
                except WarmServerError:
                    pass
    return subprocess.Popen(
        cold_command(job),
        cwd=job.cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=err,
        env=job.env,
        start_new_session=True,
    )
