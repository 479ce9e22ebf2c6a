"""`drill exercise check` when the checked code plants FIFOs where the runner reads its verdict
files (issue 32, item 6): it ends with a verdict that names the FIFO, and SIGTERM still stops
it (143). Real checks in a subprocess, bounded (tests.support.hostile_files.run_bounded): the
regression hung forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.hostile_files import BOUND_S, REPO, python_module, run_bounded
from trainer_lab.exercises.protocol import checks_file
from trainer_lab.usercode import protocol

pytestmark = [pytest.mark.lab, pytest.mark.skipif(sys.platform != "linux", reason="FIFOs")]

PLANTED = [checks_file(0), "stdout.log", "stderr.log"]  # every file: test_run_folder_reads
PLANT = f"""
import os
from pathlib import Path

RUN = Path(os.environ[{protocol.OBSERVE_ENV!r}]).parent


def plant():
    for name in {PLANTED!r}:
        path = RUN / name
        if path.exists():
            path.unlink()
        os.mkfifo(path)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DRILL_DEBUG"}
    env.update(DRILL_HOME=str(home), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return env


def _user_file(home: Path, code: str) -> Path:
    path = home / "exercises" / "first-nan" / "nan_hunt.py"
    path.parent.mkdir(parents=True)
    path.write_text(code)
    return path


def test_fifos_planted_as_the_runs_verdict_files_give_a_failing_verdict_naming_them(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    _user_file(home, PLANT + "import atexit\natexit.register(plant)  # once the checks are in\n")
    done = run_bounded(python_module("drill", "exercise", "check", "first-nan"), env=_env(home))
    assert done.returncode == 1, done.stderr
    assert f"{checks_file(0)} is a FIFO, not a regular file" in done.stdout
    assert "Traceback" not in done.stderr


def test_sigterm_stops_a_check_whose_run_folder_holds_a_fifo_with_143(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_file = _user_file(home, PLANT + "plant()\nimport time\ntime.sleep(600)\n")
    proc = subprocess.Popen(
        python_module("drill", "exercise", "check", "first-nan"),
        cwd=REPO,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + BOUND_S
        while not any(
            path.is_fifo() for path in (user_file.parent / "checks").glob(f"*/run/{checks_file(0)}")
        ):  # until the checked code planted its FIFO
            assert proc.poll() is None, f"drill exited early: {proc.communicate()}"
            assert time.monotonic() < deadline, "the FIFO never appeared"
            time.sleep(0.05)  # polling interval, not a synchronisation
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
