"""Run a lab from another process (torch-free): the API the CLI, TUI and `drill verify` use.

`run_lab` starts `python -m trainer_lab.driver` in a session of its own (forked from the warm
server on the warm path: trainer_lab.warm.start), streams its progress
lines to a callback, enforces a hard deadline, honours a cancel Event, and kills every process
the lab started (driver, torchrun, workers) on timeout or cancel. On cancel the driver first
gets SIGTERM and CANCEL_GRACE_S to record what it observed so far. It returns the run's
result.json; when the driver could not write one it writes and returns a result with status
error/timeout/cancelled and the reason in result["error"]: the run directory is never left
without result.json.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.catalogue import check_timeout, get_lab, resolve_world_size
from trainer_lab.catalogue_types import ParamError
from trainer_lab.files import read_tail
from trainer_lab.procs import PARENT_ENV, Supervised, supervise
from trainer_lab.result import LabResult, Status, ended_result, read_result, write_result
from trainer_lab.warm.job import Job
from trainer_lab.warm.start import LAUNCHER_ENV, Mode, start_process

# Extra time the driver gets beyond the lab deadline to kill its launch and write result.json.
GRACE_S = 15.0
# How long a cancelled driver gets to kill its launch and write its result before it is killed.
CANCEL_GRACE_S = 5.0
DRIVER_LOG = "driver.log"
DRIVER = "trainer_lab.driver"


@dataclass(frozen=True)
class ProgressEvent:
    done: int
    total: int
    message: str
    raw: dict[str, Any]


def _read_progress(
    stream: Any, on_progress: Callable[[ProgressEvent], None] | None, lines: list[str]
) -> None:
    for line in stream:
        lines.append(line)
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if on_progress is not None and record.get("event") == "progress":
            on_progress(
                ProgressEvent(
                    int(record.get("done", 0)),
                    int(record.get("total", 0)),
                    str(record.get("message", "")),
                    record,
                )
            )


def run_lab(
    name: str,
    params: dict[str, Any] | None = None,
    world_size: int | None = None,
    out_dir: Path | None = None,
    timeout_s: float | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    cancel: threading.Event | None = None,
    mode: Mode | None = None,
) -> LabResult:
    """Run lab `name` and return its result; mode: the warm launcher or a cold driver and
    torchrun (default trainer_lab.warm.start.default_mode()).

    Raises UnknownLabError / ParamError (before starting anything) for a bad name, param,
    world size, timeout or run directory. out_dir defaults to a fresh temporary directory.
    """
    spec = get_lab(name)
    resolved = spec.resolve_params(params or {})
    world = resolve_world_size(spec, world_size)
    timeout = check_timeout(spec.timeout_s if timeout_s is None else timeout_s)
    if out_dir is None:
        import tempfile

        out_dir = Path(tempfile.mkdtemp(prefix=f"drill-lab-{name}-"))
    prepare_run_dir(out_dir)
    args = [
        name,
        "--params",
        json.dumps(resolved),
        "--world-size",
        str(world),
        "--out",
        str(out_dir),
        "--timeout",
        str(timeout),
    ]
    env = {**os.environ, PARENT_ENV: str(os.getpid()), "PYTHONUNBUFFERED": "1"}
    if mode is not None:  # the driver's launches take the same path
        env[LAUNCHER_ENV] = mode
    start = time.monotonic()
    lines: list[str] = []
    ended: Supervised | None = None
    try:
        with (out_dir / DRIVER_LOG).open("wb") as log:
            read_end, write_end = os.pipe()
            try:
                proc = start_process(Job(DRIVER, args, env), write_end, log.fileno(), mode)
            finally:
                os.close(write_end)
            with open(read_end, encoding="utf-8", errors="replace") as stdout:
                reader = threading.Thread(
                    target=_read_progress, args=(stdout, on_progress, lines), daemon=True
                )
                reader.start()
                ended = supervise(
                    proc, start + timeout + GRACE_S, cancel, cancel_grace_s=CANCEL_GRACE_S
                )
                reader.join(timeout=5)
    finally:
        # Interrupted (e.g. KeyboardInterrupt; supervise killed the tree): still leave a result.
        if ended is None and read_result(out_dir) is None:
            with contextlib.suppress(OSError):  # never hide the interruption itself
                _end(name, resolved, world, out_dir, "cancelled", timeout, None, start)
    assert ended is not None  # supervise returned: nothing raised
    result = read_result(out_dir)
    if ended.stop == "timeout" and (result is None or result["status"] != "timeout"):
        # The driver itself never got past its deadline: the hard deadline's verdict stands.
        return _end(name, resolved, world, out_dir, "timeout", timeout, None, start)
    if result is None:
        return _end(
            name, resolved, world, out_dir, ended.stop or "error", timeout, ended.returncode, start
        )
    return result


def prepare_run_dir(out_dir: Path) -> None:
    """Create out_dir; ParamError when it is in use or cannot be created."""
    try:
        if out_dir.exists() and any(out_dir.iterdir()):
            # A lab appends to its events files: a reused directory would mix two runs' events.
            raise ParamError(f"run directory {out_dir} is not empty; choose a new one")
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / ".writable"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ParamError(f"run directory {out_dir} cannot be used: {reason}") from None


def _end(
    name: str,
    params: dict[str, Any],
    world: int,
    out_dir: Path,
    status: Status,
    timeout: float,
    returncode: int | None,
    start: float,
) -> LabResult:
    """Write and return the result of a run whose driver left none (or lost to the deadline)."""
    if status == "cancelled":
        message = "lab cancelled; every process it started was killed"
    elif status == "timeout":
        message = (
            f"lab hard deadline of {timeout:.0f} s passed; every process it started was killed"
        )
    else:
        try:  # the log's end; a FIFO or link planted there is refused (trainer_lab.files)
            log = read_tail(out_dir / DRIVER_LOG, 64 * 1024)[0].decode("utf-8", errors="replace")
        except OSError:
            log = ""
        tail = " | ".join(log.strip().splitlines()[-3:]) or "no output"
        message = f"lab driver exited with code {returncode} without a result: {tail}"
    result = ended_result(name, params, world, out_dir, status, message, time.monotonic() - start)
    write_result(out_dir, result)
    return result
