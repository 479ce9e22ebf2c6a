"""The launcher against real torchrun jobs: success, a crashing rank, a hanging rank."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.support.procs import started_by
from trainer_lab.launcher import launch
from trainer_lab.procs import is_alive

pytestmark = pytest.mark.lab


def test_healthy_job_succeeds_and_every_rank_writes_events(tmp_path: Path) -> None:
    result = launch("trainer_lab.train.selftest:ok", {}, tmp_path, 2, timeout_s=60)
    assert result.status == "ok", result.root_cause
    values = [
        line
        for rank in (0, 1)
        for line in (tmp_path / f"events-rank{rank}.jsonl").read_text().splitlines()
        if '"allreduce"' in line
    ]
    assert len(values) == 2 and all('"value":3.0' in v for v in values)


def test_crash_reports_the_failing_rank_not_its_peers(tmp_path: Path) -> None:
    result = launch(
        "trainer_lab.train.selftest:crash",
        {"crash_rank": 1, "collective_timeout_s": 5},
        tmp_path,
        2,
        timeout_s=60,
    )
    assert result.status == "error"
    assert result.root_cause is not None
    assert result.root_cause.rank == 1
    assert "deliberate failure on rank 1" in result.root_cause.message
    assert "Traceback" in result.root_cause.traceback


def test_hang_hits_the_deadline_and_no_process_survives(tmp_path: Path) -> None:
    seen: set[int] = set()
    stop = threading.Event()

    def watch() -> None:  # record every process the launch starts, while it runs
        while not stop.is_set():
            seen.update(started_by(os.getpid()))
            stop.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = launch(
            "trainer_lab.train.selftest:hang",
            {"hang_rank": 1, "collective_timeout_s": 60},
            tmp_path,
            2,
            timeout_s=9,
        )
    finally:
        stop.set()
        watcher.join()
    assert result.status == "timeout"
    # torchrun and both workers were seen, and were all killed
    assert len(seen) >= 3
    assert seen <= set(result.killed_pids)
    assert [pid for pid in seen if is_alive(pid)] == []
    assert result.root_cause is not None and result.root_cause.kind == "hang"
    # the killed ranks' events end with their last line, not the map's NUL tail
    for rank in (0, 1):
        raw = (tmp_path / f"events-rank{rank}.jsonl").read_bytes()
        lines = raw.decode().splitlines()
        assert raw.endswith(b"\n") and '"event":"started"' in lines[-1]


def test_hang_with_short_collective_timeout_names_the_silent_rank(tmp_path: Path) -> None:
    result = launch(
        "trainer_lab.train.selftest:hang",
        {"hang_rank": 1, "collective_timeout_s": 3},
        tmp_path,
        2,
        timeout_s=20,
    )
    assert result.root_cause is not None
    assert result.root_cause.rank == 1
    assert "never reached the collective" in result.root_cause.message


def test_torchrun_root_cause_rank_reads_torchruns_own_report(tmp_path: Path) -> None:
    from trainer_lab.root_cause import TORCHRUN_LOG, torchrun_root_cause_rank

    assert torchrun_root_cause_rank(tmp_path) is None  # no log
    (tmp_path / TORCHRUN_LOG).write_text(
        "Failures:\n[1]:\n  rank      : 1 (local_rank: 1)\n  exitcode  : -15\n"
        "Root Cause (first observed failure):\n[0]:\n  time      : 2026-01-01_00:00:00\n"
        "  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 4)\n"
    )
    assert torchrun_root_cause_rank(tmp_path) == 0  # the Root Cause section, not Failures
    (tmp_path / TORCHRUN_LOG).write_text("no failure report\n")
    assert torchrun_root_cause_rank(tmp_path) is None
