"""Launch a lab worker through torchrun with a hard deadline (torch-free).

    python -m torch.distributed.run --standalone --nnodes 1 --nproc-per-node N \
        --log-dir RUN/logs --redirects 3 -m trainer_lab.worker --task MOD:FUNC --spec RUN/spec.json

(started through trainer_lab._torchrun, which is the same module plus PR_SET_PDEATHSIG).
torchrun runs in its own session with stdin closed; on deadline or cancel every descendant is
frozen and SIGKILLed (see procs.kill_tree). Afterwards the root cause is the earliest failure
recorded by a rank (failures/rank{R}.json, written by trainer_lab.worker), else torchelastic's
error files, else the exit signal torchrun reported, never the timeout noise of the others.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer_lab.procs import PARENT_ENV, is_alive, kill_tree, reap

LaunchStatus = Literal["ok", "error", "timeout", "cancelled"]
FAILURES_DIR = "failures"  # same name as trainer_lab.worker.FAILURES_DIR (worker imports torch)


@dataclass
class RootCause:
    rank: int | None
    kind: str  # exception | signal | exit | hang
    message: str
    traceback: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "kind": self.kind,
            "message": self.message,
            "traceback": self.traceback,
        }

    def __str__(self) -> str:
        where = f"rank {self.rank}" if self.rank is not None else "launcher"
        return f"{where}: {self.message}"


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

    def to_dict(self) -> dict[str, Any]:
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
        "0.1",
        "--log-dir",
        str(log_dir),
        "--redirects",
        "3",
        *extra_args,
        "-m",
        "trainer_lab.worker",
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
) -> LaunchResult:
    """Run `task` (module:function) on `world_size` ranks via torchrun; never outlives timeout_s.

    on_poll is called about every 50 ms while the job runs (e.g. to stream progress).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "run_dir": str(run_dir)}
    spec_path = run_dir / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    command = torchrun_command(
        task, spec_path, world_size, run_dir / "logs", max_restarts, extra_args
    )
    start = time.monotonic()
    with (run_dir / "torchrun.log").open("wb") as log:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=worker_env(env),
            start_new_session=True,
        )
        status: LaunchStatus | None = None
        killed: list[int] = []
        try:
            while True:
                try:
                    proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if on_poll is not None:
                    on_poll()
                if cancel is not None and cancel.is_set():
                    status = "cancelled"
                elif time.monotonic() - start > timeout_s:
                    status = "timeout"
                if status is not None:
                    killed = kill_tree(proc.pid)
                    proc.wait()
                    break
        finally:
            if proc.poll() is None:  # interrupted (e.g. KeyboardInterrupt): leave nothing behind
                killed = kill_tree(proc.pid)
                proc.wait()
    for pid in killed:
        if pid != proc.pid:
            reap(pid)
    duration = time.monotonic() - start
    if status is None:
        status = "ok" if proc.returncode == 0 else "error"
    result = LaunchResult(status, proc.returncode, duration, run_dir, killed_pids=killed)
    result.failures = read_failures(run_dir)
    if status != "ok":
        result.root_cause = find_root_cause(run_dir, result.failures, status, timeout_s, world_size)
    return result


def read_failures(run_dir: Path) -> list[dict[str, Any]]:
    """Failures recorded by the ranks, earliest first."""
    records = []
    for path in (run_dir / FAILURES_DIR).glob("rank*.json"):
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError):
            continue
    return sorted(records, key=lambda r: r["time"])


def rank_logs(run_dir: Path) -> dict[int, dict[str, Path]]:
    """Per-rank stdout/stderr/error files of the last attempt under run_dir/logs."""
    found: dict[int, dict[str, Path]] = {}
    attempts = sorted(
        (run_dir / "logs").glob("*/attempt_*"), key=lambda p: int(p.name.split("_")[-1])
    )
    if not attempts:
        return found
    for rank_dir in attempts[-1].iterdir():
        if rank_dir.is_dir() and rank_dir.name.isdigit():
            found[int(rank_dir.name)] = {
                name: rank_dir / f"{name}.log" if name != "error" else rank_dir / "error.json"
                for name in ("stdout", "stderr", "error")
            }
    return found


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


_SIGNAL = re.compile(r"Signal (\d+) \((\w+)\) received by PID (\d+)")
_ROOT_RANK = re.compile(r"rank\s*:\s*(\d+)")
_ROOT_EXIT = re.compile(r"exitcode\s*:\s*(-?\d+)")


# Messages of ranks that failed only because a peer failed or hung: timeout noise.
_NOISE = re.compile(
    r"timed out|timeout|connection reset|connection closed|broken pipe|"
    r"NCCL communicator was aborted|ProcessGroup.*(aborted|shut down)",
    re.IGNORECASE,
)


def is_noise(failure: dict[str, Any]) -> bool:
    return bool(_NOISE.search(f"{failure.get('type', '')}: {failure.get('message', '')}"))


def find_root_cause(
    run_dir: Path,
    failures: list[dict[str, Any]],
    status: LaunchStatus,
    timeout_s: float,
    world_size: int | None = None,
) -> RootCause:
    """The first real failure; a peer's collective timeout is reported only when nothing else
    failed, and then the ranks that recorded nothing are named as the likely hung ones."""
    primary = [f for f in failures if not is_noise(f)]
    if primary:
        first = primary[0]
        return RootCause(
            first["rank"], "exception", f"{first['type']}: {first['message']}", first["traceback"]
        )
    if failures:
        first = failures[0]
        failed = {f["rank"] for f in failures}
        silent = [r for r in range(world_size or 0) if r not in failed]
        if silent:
            names = ", ".join(str(r) for r in silent)
            return RootCause(
                silent[0],
                "hang",
                f"rank(s) {names} never reached the collective (hang); rank {first['rank']} gave "
                f"up waiting: {first['type']}: {first['message']}",
                first["traceback"],
            )
        return RootCause(
            first["rank"], "exception", f"{first['type']}: {first['message']}", first["traceback"]
        )
    for rank, files in sorted(rank_logs(run_dir).items()):
        error_file = files["error"]
        if error_file.exists():
            try:
                data = json.loads(error_file.read_text())["message"]
                message = data["message"] if isinstance(data, dict) else str(data)
                extra = data.get("extraInfo", {}) if isinstance(data, dict) else {}
                trace = extra.get("py_callstack", "")
                return RootCause(rank, "exception", message, trace)
            except (OSError, json.JSONDecodeError, KeyError, TypeError):
                continue
    if status in ("timeout", "cancelled"):
        tails = "; ".join(
            f"rank {rank}: {_tail(files['stdout'], 1) or '(no output)'}"
            for rank, files in sorted(rank_logs(run_dir).items())
        )
        what = "deadline" if status == "timeout" else "cancel"
        return RootCause(
            None,
            "hang" if status == "timeout" else "cancelled",
            f"{what} after {timeout_s:.0f} s with no rank failing; last output: {tails or 'none'}",
        )
    log = (
        (run_dir / "torchrun.log").read_text(errors="replace")
        if (run_dir / "torchrun.log").exists()
        else ""
    )
    root_part = log.split("Root Cause", 1)[-1] if "Root Cause" in log else ""
    rank_match = _ROOT_RANK.search(root_part)
    exit_match = _ROOT_EXIT.search(root_part)
    signal_match = _SIGNAL.search(root_part)
    rank = int(rank_match.group(1)) if rank_match else None
    if signal_match:
        return RootCause(rank, "signal", f"killed by signal {signal_match.group(2)}")
    if exit_match:
        return RootCause(rank, "exit", f"exited with code {exit_match.group(1)}")
    last = " | ".join(log.strip().splitlines()[-3:])
    return RootCause(rank, "exit", f"torchrun failed: {last or 'no output'}")


def any_alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if is_alive(pid)]
