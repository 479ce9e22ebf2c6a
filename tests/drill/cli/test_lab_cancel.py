"""`drill lab run` stopped by Ctrl-C (SIGINT), SIGTERM or SIGHUP: the run dir records the run as
cancelled, with what the lab observed so far, the command exits 128 + the signal's number (the
README's one rule) and no lab process survives.

Real processes: `python -m drill lab run resume` (two torchrun launches), signalled while a
launch runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.procs import left_behind
from trainer_lab.devices import backend_choice
from trainer_lab.procs import descendants, is_alive, wait_gone

pytestmark = pytest.mark.lab


def _wait_until(ready: Callable[[], bool], proc: subprocess.Popen[str], seen: set[int]) -> None:
    """Poll (bounded) until ready(), collecting the command's process tree meanwhile."""
    deadline = time.monotonic() + 150
    while not ready():
        assert proc.poll() is None, f"drill exited early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the lab never got there"
        seen.update(descendants(proc.pid))
        time.sleep(0.05)  # polling interval, not a synchronisation
    seen.update(descendants(proc.pid))


def _run_and_signal(
    out: Path, sig: signal.Signals, ready: Callable[[], bool]
) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "drill", "lab", "run", "resume", "--out", str(out)],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: set[int] = set()
    try:
        _wait_until(ready, proc, seen)
        assert len(seen) >= 4, seen  # driver -> torchrun -> 2 workers
        proc.send_signal(sig)
        stdout, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert wait_gone(sorted(seen), timeout_s=10) == []
    assert [pid for pid in seen if is_alive(pid)] == []
    return proc.returncode, stdout, err


def _result(out: Path) -> dict[str, object]:
    return json.loads((out / "result.json").read_text())


def _workers_running(out: Path) -> Callable[[], bool]:
    return lambda: (out / "runs" / "killed" / "events-rank1.jsonl").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_the_first_launch_records_a_cancelled_run(
    sig: signal.Signals, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, _, err = _run_and_signal(out, sig, _workers_running(out))
    assert code == 128 + sig
    assert f"{sig.name}: cancelling the lab" in err
    result = _result(out)
    assert result["status"] == "cancelled"
    assert "killed" in result["error"]["message"]  # type: ignore[index]
    assert left_behind() == []


def test_sigterm_during_the_second_launch_keeps_the_first_launchs_observations(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    second = out / "runs" / "resumed" / "events-rank1.jsonl"
    code, stdout, err = _run_and_signal(out, signal.SIGTERM, second.exists)
    assert code == 128 + signal.SIGTERM
    lines = stdout.splitlines()
    assert lines[0] == f"resume · world size 2 · {backend_choice(2)}"
    assert lines[1].startswith("resume: cancelled in ")
    assert "SIGTERM: cancelling the lab" in err
    result = _result(out)
    assert result["status"] == "cancelled"
    observations = result["observations"]
    assert isinstance(observations, dict) and "killed_step" in observations
    names = [check["name"] for check in result["checks"]]  # type: ignore[attr-defined]
    assert "killed_and_restored" in names and "uninterrupted_repeatable" in names
    assert "modes" not in observations  # the cancelled launch's own observations never came
