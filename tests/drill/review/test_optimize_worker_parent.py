"""The fit worker dies with the drill process that started it, even when that process was gone
before the worker's first line ran (it is then a child of init, and getppid alone would take
init for its parent)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from drill.review import optimize
from drill.review.optimize import WORKER_MODULE
from drill.review.optimize_worker import PARENT_ENV


def test_starter_and_worker_name_the_same_variable() -> None:
    assert optimize.PARENT_ENV == PARENT_ENV  # the starter takes it from the worker's module


def _worker(tmp_path: Path, parent: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", WORKER_MODULE, "--db", str(tmp_path / "absent.sqlite")],
        env={**os.environ, PARENT_ENV: parent},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_worker_whose_named_parent_is_not_its_parent_exits_at_once(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that is nobody's parent now
    done = _worker(tmp_path, str(gone.pid))
    assert done.returncode == 1
    assert done.stdout == ""  # it never started the fit


def test_a_worker_started_by_its_named_parent_runs(tmp_path: Path) -> None:
    done = _worker(tmp_path, str(os.getpid()))
    # it ran: the missing database is reported on its channel instead of a silent exit
    assert done.stdout.strip(), done.stderr
