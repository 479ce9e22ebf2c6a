"""SIGTERM, SIGHUP and SIGINT in the middle of `drill db backup`, `drill db restore` and
`drill optimize` (issue 25, item 9): real processes, real signals, synchronised on a line the
process prints once it is half-way (tests/support/signal_child.py parks SQLite's backup after
its first page; tests/support/blocking_fit_worker.py parks the fit). Afterwards no temporary
copy or journal is left, the live database is whole, the fit worker is gone, and the command
exits 128 + the signal with one line. SIGKILL of `drill optimize` takes its worker with it."""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage.integrity import check_database
from storage.migrations import LATEST_VERSION
from tests.support.review_logs import LogBuilder
from tests.support.signal_child import PARKED
from trainer_lab.procs import descendants, is_alive

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
LEFTOVERS = (".tmp", ".restore", ".pagesize", "-journal")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals, /proc")


def _database(path: Path, cards: int) -> Path:
    log = LogBuilder(path)
    for i in range(cards):
        log.card(f"card-{i}", "deck", due=NOW + timedelta(days=1))
        log.review(f"card-{i}", "deck", NOW - timedelta(days=2), 3, None)
    return log.write()


def _cards(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM card_state").fetchone()[0])
    finally:
        conn.close()


def _start(module: str, args: list[str], home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "DRILL_DEBUG"}
    env.update(DRILL_HOME=str(home), PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(proc: subprocess.Popen[str], stream: str, wanted: str) -> None:
    """Read `stream` line by line until one contains `wanted` (bounded: a minute)."""
    handle = getattr(proc, stream)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([handle], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = handle.readline()
        if not line:
            break
        if wanted in line:
            return
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"never printed {wanted!r}: stdout {out!r} stderr {err!r}")


def _stopped(proc: subprocess.Popen[str], signum: int) -> str:
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _leftovers(*folders: Path) -> list[str]:
    return sorted(
        p.name for folder in folders if folder.is_dir() for p in folder.iterdir()
        if any(mark in p.name for mark in LEFTOVERS)
    )  # fmt: skip


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_db_backup_leaves_no_partial_copy(
    home: Path, tmp_path: Path, signum: int
) -> None:
    _database(home / "drill.sqlite3", cards=300)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["backup-1", "db", "backup", str(out / "b.sqlite3")]
    proc = _start("tests.support.signal_child", argv, home)
    _wait_for_line(proc, "stderr", PARKED)
    assert _leftovers(out), "the copy was not under way"
    err = _stopped(proc, signum)
    assert "interrupted" in err or signal.Signals(signum).name in err
    assert list(out.iterdir()) == []
    assert _cards(home / "drill.sqlite3") == 300


@pytest.mark.parametrize("park_on", [1, 2], ids=["saving-current", "copying-in"])
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_db_restore_keeps_the_live_database_whole(
    home: Path, tmp_path: Path, signum: int, park_on: int
) -> None:
    live = _database(home / "drill.sqlite3", cards=300)
    backup = _database(tmp_path / "backup.sqlite3", cards=200)
    argv = [f"backup-{park_on}", "db", "restore", str(backup)]
    proc = _start("tests.support.signal_child", argv, home)
    _wait_for_line(proc, "stderr", PARKED)
    _stopped(proc, signum)
    assert _leftovers(home, home / "backups") == []
    assert check_database(live) == (LATEST_VERSION, [])
    assert _cards(live) == 300  # the old database: the copy-in is one transaction, rolled back
    for kept in (home / "backups").glob("*.sqlite3"):  # a kept copy is complete, or absent
        assert check_database(kept)[1] == [] and _cards(kept) == 300


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_export_csv_leaves_no_partial_file(
    home: Path, tmp_path: Path, signum: int
) -> None:
    _database(home / "drill.sqlite3", cards=20)
    out = tmp_path / "out"
    out.mkdir()
    proc = _start("tests.support.signal_child", ["csv", "export", "csv", str(out / "r.csv")], home)
    _wait_for_line(proc, "stderr", PARKED)
    assert _leftovers(out), "the export was not under way"
    _stopped(proc, signum)
    assert list(out.iterdir()) == []


def _worker_of(proc: subprocess.Popen[str]) -> int:
    (worker,) = [pid for pid in descendants(proc.pid) if is_alive(pid)]
    return worker


def _gone(pid: int) -> bool:
    """Wait (bounded) until `pid` has exited; a zombie nobody reaped yet counts as exited."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("signum", [*SIGNALS, signal.SIGKILL], ids=lambda s: signal.Signals(s).name)
def test_the_fit_worker_does_not_outlive_drill_optimize(home: Path, signum: int) -> None:
    _database(home / "drill.sqlite3", cards=5)
    proc = _start("tests.support.optimize_child", [], home)
    _wait_for_line(proc, "stderr", "fit parked")
    worker = _worker_of(proc)
    try:
        if signum == signal.SIGKILL:
            proc.kill()
            proc.communicate(timeout=60)
        else:
            _stopped(proc, signum)
        assert _gone(worker), f"the fit worker {worker} outlived drill optimize"
    finally:
        if is_alive(worker):
            os.kill(worker, signal.SIGKILL)
