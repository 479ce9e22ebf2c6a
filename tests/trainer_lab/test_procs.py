"""procs.supervise, the one wait/deadline/cancel/kill loop (launcher and run_lab), on small
stand-in processes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from trainer_lab.procs import supervise

CHILD = """
import signal, sys, time
from pathlib import Path
mode, marker = sys.argv[1], Path(sys.argv[2])
def on_term(*_):
    marker.write_text("recorded")
    sys.exit(3)
signal.signal(signal.SIGTERM, on_term if mode == "graceful" else signal.SIG_IGN)
print("ready", flush=True)
time.sleep(120)
"""


def _start(mode: str, marker: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(marker)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_cancel_with_grace_lets_the_process_record_then_ends_it(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    proc = _start("graceful", tmp_path / "marker")
    ended = supervise(proc, time.monotonic() + 600, cancel, cancel_grace_s=30)
    assert (ended.stop, ended.returncode) == ("cancelled", 3)
    assert (tmp_path / "marker").read_text() == "recorded"


def test_a_process_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    proc = _start("stubborn", tmp_path / "marker")
    ended = supervise(proc, time.monotonic() + 600, cancel, cancel_grace_s=0.5)
    assert (ended.stop, ended.returncode) == ("cancelled", -9)
    assert not (tmp_path / "marker").exists()


def test_without_grace_cancel_and_deadline_kill_at_once(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    ended = supervise(_start("graceful", tmp_path / "m"), time.monotonic() + 600, cancel)
    assert (ended.stop, ended.returncode) == ("cancelled", -9)
    calls: list[str] = []
    ended = supervise(
        _start("graceful", tmp_path / "m"), time.monotonic(), on_timeout=lambda: calls.append("t")
    )
    assert (ended.stop, ended.returncode, calls) == ("timeout", -9, ["t"])
    assert not (tmp_path / "m").exists()  # no SIGTERM: nothing recorded


def test_a_process_that_ends_on_its_own_is_not_stopped() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    ended = supervise(proc, time.monotonic() + 600)
    assert (ended.stop, ended.returncode, ended.killed) == (None, 4, [])
