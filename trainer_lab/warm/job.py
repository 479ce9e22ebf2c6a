"""Fork a process that runs a module as `python -m MODULE ARGS` would, from a warm process.

Used by the server for each request and by a warm process (a forked lab driver) that launches
ranks itself. The child gets its own session (as `start_new_session=True`), dies with its parent
(PR_SET_PDEATHSIG), takes the given stdio, working directory and environment, and runs the
module through `fresh.run_as_main` (a contained job, in a fork of it that it keeps: see
trainer_lab.containment). `ForkedProcess` is what the parent holds: the subset of
`subprocess.Popen` that `procs.supervise` uses.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass, field

from trainer_lab import containment
from trainer_lab.procs import PARENT_ENV, die_with_parent

# Modules a warm process runs on request; anything else is refused (a request names code).
RUNNABLE = frozenset(
    {
        "trainer_lab.driver",
        "trainer_lab.warm.agent",
        "trainer_lab.usercode.bootstrap",
    }
)


_IN_WARM_PROCESS = False


def in_warm_process() -> bool:
    """True in a process forked from the warm server: it forks its own jobs (it is warm too)."""
    return _IN_WARM_PROCESS


@dataclass
class Job:
    module: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None = None
    close_fds: list[int] = field(default_factory=list)  # the parent's own fds, closed in the child


def fork_job(job: Job, stdin: int, stdout: int, stderr: int) -> int:
    """Fork the job's process; returns its pid in the parent (the child never returns)."""
    if job.module not in RUNNABLE:
        raise ValueError(f"a warm process does not run {job.module!r}")
    parent = os.getpid()
    pid = os.fork()
    if pid != 0:
        return pid
    try:  # the child: any failure before the module runs ends it with status 127
        global _IN_WARM_PROCESS
        _IN_WARM_PROCESS = True
        os.setsid()
        die_with_parent(parent)
        for fd in job.close_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
            if fd != target:
                os.dup2(fd, target)
        for fd in {stdin, stdout, stderr} - {0, 1, 2}:
            with contextlib.suppress(OSError):
                os.close(fd)
        if job.cwd:
            os.chdir(job.cwd)
        os.environ.clear()
        os.environ.update(job.env)
        os.environ[PARENT_ENV] = str(parent)
        containment.enter()  # a contained job: this process keeps, a fork of it runs the module
        from trainer_lab.warm.fresh import run_as_main

        run_as_main(job.module, job.args)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.write(2, f"warm launcher: could not start {job.module}: {error!r}\n".encode())
    os._exit(127)


class ForkedProcess:
    """A direct child started by fork_job, waited for like a Popen."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0.0)
            time.sleep(0.005)
        assert self.returncode is not None
        return self.returncode


def start_local(job: Job, stdin: int, stdout: int, stderr: int) -> ForkedProcess:
    return ForkedProcess(fork_job(job, stdin, stdout, stderr))
