"""One exit rule for signals (issue 32, smaller items): any command stopped by signal N exits
128 + N, also one that catches the signal itself to cancel its check (`drill exercise check`,
which exited 3) or to pause (`drill mock watch`, which exited 0). Real processes, real signals,
synchronised on what the process printed or created."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals")


def _start(args: list[str], home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "DRILL_DEBUG"}
    env.update(DRILL_HOME=str(home), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "drill", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(proc: subprocess.Popen[str], wanted: str) -> None:
    """Read stdout line by line until one contains `wanted` (bounded: a minute)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            break
        if wanted in line:
            return
    proc.kill()
    raise AssertionError(f"never printed {wanted!r}: {proc.communicate()}")


def _wait_until(ready: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert proc.poll() is None, f"drill exited early: {proc.communicate()}"
        assert time.monotonic() < deadline, "never got there"
        time.sleep(0.05)  # polling interval, not a synchronisation


def _stop(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[int, str, str]:
    try:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_mock_watch_paused_by_a_signal_exits_128_plus_n(
    sig: signal.Signals, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    made = _start(["mock", "notebook"], home)
    assert made.wait(timeout=60) == 0, made.communicate()
    proc = _start(["mock", "watch"], home)
    _wait_for_line(proc, "Started coding round 1")
    code, out, err = _stop(proc, sig)
    assert code == 128 + sig, (out, err)
    assert "Paused and saved at:" in out  # what the command does with the signal stays


@pytest.mark.lab
def test_exercise_check_cancelled_by_sigterm_exits_143(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_file = home / "exercises" / "first-nan" / "nan_hunt.py"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("import time\ntime.sleep(600)\n")  # runs until the check is stopped
    proc = _start(["exercise", "check", "first-nan"], home)
    checks = user_file.parent / "checks"
    _wait_until(lambda: checks.is_dir() and any(checks.iterdir()), proc)
    code, _out, err = _stop(proc, signal.SIGTERM)
    assert code == 143, err
    assert "SIGTERM: cancelling" in err
    assert "drill: stopped by SIGTERM" in err
