"""Run a lab from another process (torch-free): the API the CLI, TUI and `drill verify` use.

`run_lab` starts `python -m trainer_lab.run` in a session of its own, streams its progress
lines to a callback, enforces a hard deadline, honours a cancel Event, and kills every process
the lab started (driver, torchrun, workers) on timeout or cancel. It returns result.json's
content; when the driver could not write one it returns a result with status
error/timeout/cancelled and the reason in result["error"].
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.catalogue import check_world_size, get_lab
from trainer_lab.catalogue_types import ParamError
from trainer_lab.procs import PARENT_ENV, kill_tree
from trainer_lab.run import base_result, write_result

# Extra time the driver gets beyond the lab deadline to kill its launch and write result.json.
GRACE_S = 15.0


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
) -> dict[str, Any]:
    """Run lab `name` and return its result dict.

    Raises UnknownLabError / ParamError (before starting anything) for a bad name, param or
    world size. out_dir defaults to a fresh temporary directory.
    """
    spec = get_lab(name)
    resolved = spec.resolve_params(params or {})
    world = check_world_size(spec, world_size or spec.default_world_size)
    timeout = timeout_s if timeout_s is not None else spec.timeout_s
    if out_dir is None:
        import tempfile

        out_dir = Path(tempfile.mkdtemp(prefix=f"drill-lab-{name}-"))
    if out_dir.exists() and any(out_dir.iterdir()):
        # A lab appends to its events files: a reused directory would mix two runs' events.
        raise ParamError(f"run directory {out_dir} is not empty; choose a new one")
    out_dir.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "trainer_lab.run",
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
    start = time.monotonic()
    lines: list[str] = []
    status: str | None = None
    with (out_dir / "driver.log").open("wb") as log:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            text=True,
            start_new_session=True,
        )
        reader = threading.Thread(
            target=_read_progress, args=(proc.stdout, on_progress, lines), daemon=True
        )
        reader.start()
        try:
            while True:
                try:
                    proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if cancel is not None and cancel.is_set():
                    status = "cancelled"
                elif time.monotonic() - start > timeout + GRACE_S:
                    status = "timeout"
                if status is not None:
                    kill_tree(proc.pid)
                    proc.wait()
                    break
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
                proc.wait()
        reader.join(timeout=5)
    result_path = out_dir / "result.json"
    if status is None and result_path.exists():
        return json.loads(result_path.read_text())
    result = base_result(name, resolved, world, out_dir)
    result["duration_s"] = round(time.monotonic() - start, 3)
    if status is not None:
        result["status"] = status
        what = "cancelled" if status == "cancelled" else f"hard deadline of {timeout:.0f} s passed"
        result["error"] = {"message": f"lab {what}; every process it started was killed"}
    else:
        tail = (out_dir / "driver.log").read_text(errors="replace").strip().splitlines()[-3:]
        result["error"] = {
            "message": f"lab driver exited with code {proc.returncode} without a result: "
            + (" | ".join(tail) or "no output")
        }
    write_result(out_dir, result)
    return result
