"""run_lab from a caller's point of view: progress, cancel, deadline, parent death."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.procs import left_behind, started_by
from trainer_lab.api import ProgressEvent, run_lab
from trainer_lab.catalogue_types import ParamError
from trainer_lab.procs import PARENT_ENV, is_alive, wait_gone

pytestmark = pytest.mark.lab


def _wait_for_tree(root: int, count: int, stop: threading.Event, seen: set[int]) -> bool:
    """Collect root's descendants until at least `count` exist (driver's tree is up)."""
    while not stop.is_set():
        tree = started_by(root)
        seen.update(tree)
        if len(tree) >= count:
            return True
        stop.wait(0.05)
    return False


def test_bad_params_raise_before_starting_anything(tmp_path: Path) -> None:
    with pytest.raises(ParamError, match="valid"):
        run_lab("ddp-baseline", {"steps": "many"}, 2, tmp_path)
    with pytest.raises(ParamError, match="out of range"):
        run_lab("ddp-baseline", {}, 1, tmp_path)
    assert not (tmp_path / "driver.log").exists()


def test_a_used_run_directory_is_refused(tmp_path: Path) -> None:
    # Labs append to their events files: a second run in the same directory would mix runs.
    (tmp_path / "events-rank0.jsonl").write_text("{}\n")
    with pytest.raises(ParamError, match="not empty"):
        run_lab("ddp-baseline", {}, 2, tmp_path)
    assert not (tmp_path / "driver.log").exists()


def test_progress_is_streamed(tmp_path: Path) -> None:
    events: list[ProgressEvent] = []
    result = run_lab("ddp-baseline", {"steps": 2}, 2, tmp_path, 90, on_progress=events.append)
    assert result["status"] == "ok"
    assert events[0].message.startswith("launching")
    assert events[-1].done == events[-1].total == 1


def test_cancel_kills_driver_torchrun_and_workers(tmp_path: Path) -> None:
    cancel = threading.Event()
    stop = threading.Event()
    seen: set[int] = set()

    def cancel_when_workers_run() -> None:
        # our runner child (driver) -> torchrun -> 2 workers
        if _wait_for_tree(os.getpid(), 4, stop, seen):
            cancel.set()

    watcher = threading.Thread(target=cancel_when_workers_run)
    watcher.start()
    try:
        result = run_lab("resume", {}, 2, tmp_path, 120, cancel=cancel)
    finally:
        stop.set()
        watcher.join()
    assert cancel.is_set()
    assert result["status"] == "cancelled"
    assert len(seen) >= 4
    assert [pid for pid in seen if is_alive(pid)] == []
    assert "killed" in result["error"]["message"]


def test_lab_deadline_gives_timeout_and_leaves_nothing(tmp_path: Path) -> None:
    result = run_lab("resume", {}, 2, tmp_path, timeout_s=0.5)
    assert result["status"] == "timeout"
    assert "deadline" in result["error"]["message"]
    assert left_behind() == []


def test_killing_the_launching_process_takes_torchrun_and_workers_with_it(
    tmp_path: Path,
) -> None:
    # A launch whose rank 1 hangs forever and whose deadlines are far away: only the
    # PR_SET_PDEATHSIG chain (launcher -> torchrun -> workers) can end it.
    code = (
        "import sys; from pathlib import Path; from trainer_lab.launcher import launch; "
        "launch('trainer_lab.train.selftest:hang', {'collective_timeout_s': 600}, "
        "Path(sys.argv[1]), 2, 600)"
    )
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    parent = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stop = threading.Event()
    seen: set[int] = set()
    try:
        assert _wait_for_tree(parent.pid, 3, stop, seen)  # torchrun + 2 workers
        parent.send_signal(signal.SIGKILL)  # no cleanup code runs in the parent
        parent.wait()
        assert wait_gone(sorted(seen), timeout_s=20) == []
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
