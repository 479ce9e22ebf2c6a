"""Launch a lab worker through torchrun with a hard deadline (torch-free).

    python -m torch.distributed.run --standalone --nnodes 1 --nproc-per-node N \
        --log-dir RUN/logs --redirects 3 -m trainer_lab.train.worker --task MOD:FUNC \
        --spec RUN/spec.json

(started through trainer_lab._torchrun, which is the same module plus PR_SET_PDEATHSIG), or, on
the warm path (trainer_lab.warm.start), the same arguments given to trainer_lab.warm.agent in a
process forked from the warm server, whose ranks are forks of a process that imported torch.
torchrun runs in its own session with stdin closed; on deadline or cancel every descendant is
frozen and SIGKILLed (see procs.supervise). A failed launch's root cause comes from
trainer_lab.root_cause: the first rank that really failed, never the timeout noise of the others.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer_lab.events import trim_run_events
from trainer_lab.procs import PARENT_ENV, supervise
from trainer_lab.rank_output import RankOutputTail
from trainer_lab.result import LaunchInfo
from trainer_lab.root_cause import (
    TORCHRUN_LOG,
    RootCause,
    find_root_cause,
    rank_logs,
    read_failures,
)
from trainer_lab.warm.job import Job
from trainer_lab.warm.start import TORCHRUN, Mode, start_process

__all__ = [  # the root-cause names stay importable from here (trainer_lab.usercode.harness)
    "LaunchResult",
    "RootCause",
    "find_root_cause",
    "launch",
    "rank_logs",
    "read_failures",
    "torchrun_command",
    "worker_env",
]

LaunchStatus = Literal["ok", "error", "timeout", "cancelled"]


@dataclass
class LaunchResult:
    status: LaunchStatus
    returncode: int | None
    duration_s: float
    run_dir: Path
    root_cause: RootCause | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    killed_pids: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> LaunchInfo:
        return {
            "status": self.status,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "run_dir": str(self.run_dir),
            "root_cause": self.root_cause.to_dict() if self.root_cause else None,
            "rank_logs": {
                str(rank): {name: str(path) for name, path in files.items() if path.exists()}
                for rank, files in sorted(rank_logs(self.run_dir).items())
            },
        }


def torchrun_command(
    task: str,
    spec_path: Path,
    world_size: int,
    log_dir: Path,
    max_restarts: int = 0,
    extra_args: tuple[str, ...] = (),
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "trainer_lab._torchrun",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(world_size),
        "--max-restarts",
        str(max_restarts),
        "--monitor-interval",
        "0.05",
        "--log-dir",
        str(log_dir),
        "--redirects",
        "3",
        *extra_args,
        "-m",
        "trainer_lab.train.worker",
        "--task",
        task,
        "--spec",
        str(spec_path),
    ]


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TORCHELASTIC_", "MASTER_", "LOCAL_RANK", "RANK", "WORLD_SIZE"))
    }
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONUNBUFFERED"] = "1"
    env[PARENT_ENV] = str(os.getpid())
    if extra:
        env.update(extra)
    return env


def launch(
    task: str,
    spec: dict[str, Any],
    run_dir: Path,
    world_size: int,
    timeout_s: float,
    cancel: threading.Event | None = None,
    env: dict[str, str] | None = None,
    max_restarts: int = 0,
    extra_args: tuple[str, ...] = (),
    on_poll: Callable[[], None] | None = None,
    mode: Mode | None = None,
    on_output: Callable[[str], None] | None = None,
) -> LaunchResult:
    """Run `task` (module:function) on `world_size` ranks via torchrun; never outlives timeout_s.

    on_poll is called about every 50 ms while the job runs (e.g. to stream progress). on_output
    gets each line rank 0 prints (`ctx.log`) as soon as a poll sees it, the last ones before
    this returns. mode picks the warm launcher or torchrun (default:
    trainer_lab.warm.start.default_mode()).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "run_dir": str(run_dir)}
    spec_path = run_dir / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    command = torchrun_command(
        task, spec_path, world_size, run_dir / "logs", max_restarts, extra_args
    )
    job = Job(TORCHRUN, command[3:], worker_env(env))
    start = time.monotonic()
    output = RankOutputTail(run_dir / "logs") if on_output is not None else None

    def stream_output() -> None:
        if output is not None and on_output is not None:
            for line in output.poll():
                on_output(line)

    def poll() -> None:
        if on_poll is not None:
            on_poll()
        stream_output()

    with (run_dir / TORCHRUN_LOG).open("wb") as log:
        proc = start_process(job, log.fileno(), mode=mode)
        ended = supervise(proc, start + timeout_s, cancel, poll)
    duration = time.monotonic() - start
    stream_output()  # what the ranks printed after the last poll
    trim_run_events(run_dir)  # the ranks are gone: cut what a killed one left after its lines
    status: LaunchStatus = ended.stop or ("ok" if ended.returncode == 0 else "error")
    result = LaunchResult(status, ended.returncode, duration, run_dir, killed_pids=ended.killed)
    result.failures = read_failures(run_dir)
    if status != "ok":
        result.root_cause = find_root_cause(run_dir, result.failures, status, timeout_s, world_size)
    return result
