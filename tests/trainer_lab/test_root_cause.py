"""The per-rank root-cause rule (the hang lab's): reports built from failures, stderr and
torchrun's exit codes, then the first real error, the late rank, the hung rank or the odd one
out. The launcher's rule is covered in test_launcher.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainer_lab.root_cause import (
    TORCHRUN_LOG,
    RankReport,
    error_kind,
    find_root_cause,
    named_late_ranks,
    rank_reports,
    root_cause_from_reports,
    seconds_to_failure,
)

LATE = "Rank 2 failed to pass monitoredBarrier in 2000 ms"


def enter(step: int, time: float, op: str = "allreduce", shape: tuple[int, ...] = (8,)) -> dict:
    return {"event": "enter", "step": step, "time": time, "op": op, "shape": list(shape)}


def report(
    last: dict[str, Any] | None, error: str | None = None, time: float | None = None
) -> RankReport:
    kind = error_kind(error) if error else None
    return {"last": last, "error": error, "time": time, "kind": kind}


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("RuntimeError: Detected mismatch between collectives on ranks", "mismatch"),
        (f"RuntimeError: {LATE}", "late"),
        ("RuntimeError: monitoredBarrier failed", "peer-gone"),
        ("RuntimeError: Connection reset by peer", "peer-gone"),
        ("DistBackendError: Timed out waiting 2000ms", "timeout"),
        ("RuntimeError: simulated fault on rank 1", "exception"),
    ],
)
def test_error_kind_classifies_messages(message: str, kind: str) -> None:
    assert error_kind(message) == kind


def test_a_real_error_beats_earlier_timeout_noise() -> None:
    reports = {
        0: report(enter(2, 1.0), "Timed out waiting", 3.0),
        1: report(enter(2, 1.0), "RuntimeError: boom", 5.0),
    }
    root = root_cause_from_reports(reports)
    assert (root["rank"], root["kind"]) == (1, "exception")
    naive = root_cause_from_reports(reports, "first_error")
    assert (naive["rank"], naive["kind"]) == (0, "timeout")


def test_only_noise_blames_the_rank_that_never_entered_the_collective() -> None:
    reports = {0: report(enter(2, 1.0), "Timed out waiting", 4.0), 1: report(enter(1, 0.5))}
    root = root_cause_from_reports(reports)
    assert (root["rank"], root["kind"], root["candidates"]) == (1, "hang", [1])


def test_monitored_barrier_names_the_late_rank() -> None:
    reports = {
        0: report(enter(2, 1.0), f"RuntimeError: {LATE}", 3.0),
        1: report(enter(2, 1.0), "RuntimeError: monitoredBarrier failed", 3.1),
        2: report(enter(2, 1.0)),
    }
    root = root_cause_from_reports(reports)
    assert (root["rank"], root["kind"], root["candidates"]) == (2, "late", [2])
    assert named_late_ranks("Ranks 1, 3 failed to pass monitoredBarrier") == [1, 3]
    assert named_late_ranks(None) == []


def test_the_minority_collective_is_the_mismatch() -> None:
    timeout = "Timed out waiting"
    reports = {
        0: report(enter(2, 1.0), timeout, 4.0),
        1: report(enter(2, 1.0), timeout, 4.0),
        2: report(enter(2, 1.0, op="broadcast"), timeout, 4.0),
    }
    root = root_cause_from_reports(reports)
    assert (root["rank"], root["kind"]) == (2, "mismatch")
    assert "rank 2: broadcast[8]" in root["message"]


def test_nothing_failed_is_unknown() -> None:
    root = root_cause_from_reports({0: report(enter(1, 0.0)), 1: report(enter(1, 0.0))})
    assert root == {"rank": None, "kind": "unknown", "message": "no rank reported an error"}


def test_seconds_to_failure_is_the_earliest_among_the_ranks_asked() -> None:
    reports = {
        0: report(enter(2, 1.0), "Timed out", 3.5),
        1: report(enter(2, 1.0), "Timed out", 2.25),
        2: report(None),
    }
    assert seconds_to_failure(reports, [0, 1, 2]) == 1.25
    assert seconds_to_failure(reports, [0]) == 2.5
    assert seconds_to_failure(reports, [2]) is None


def test_rank_reports_read_failures_native_aborts_and_torchruns_signals(tmp_path: Path) -> None:
    attempt = tmp_path / "logs" / "run" / "attempt_0"
    for rank in range(3):
        (attempt / str(rank)).mkdir(parents=True)
        (attempt / str(rank) / "stderr.log").write_text("")
    (attempt / "1" / "stderr.log").write_text(
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
        "  what():  [enforce fail at gloo/transport] op.preamble.length <= op.nbytes\n"
    )
    (tmp_path / TORCHRUN_LOG).write_text(
        "Failures:\n[2]:\n  rank      : 2 (local_rank: 2)\n  exitcode  : -9 (pid: 7)\n"
    )
    failures = [
        {"rank": 0, "time": 9.0, "type": "DistBackendError", "message": "Timed out waiting"}
    ]
    events = {0: [enter(1, 1.0), enter(2, 2.0)], 1: [enter(2, 2.5)], 2: [enter(2, 3.0)]}
    reports = rank_reports(tmp_path, failures, events, 3)
    assert reports[0]["kind"] == "timeout" and reports[0]["last"]["step"] == 2
    assert reports[1]["kind"] == "abort" and reports[1]["time"] == 2.5
    assert "op.preamble.length" in reports[1]["error"]
    assert reports[2]["kind"] == "signal" and "signal 9" in reports[2]["error"]
    # the abort (earlier than the kill) is the first real error
    assert root_cause_from_reports(reports)["rank"] == 1


KILLED_RANK_1 = (
    "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-28_21:00:00\n"
    "  rank      : 1 (local_rank: 1)\n  exitcode  : -9 (pid: 4242)\n  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 4242\n"
)
PEER_GONE = {
    "rank": 0,
    "time": 5.0,
    "type": "DistBackendError",
    "message": "Connection closed by peer [127.0.0.1]:1234",
    "traceback": "",
}


def test_a_silent_rank_the_launcher_saw_killed_is_the_signal_not_a_hang(tmp_path: Path) -> None:
    """Rank 1 is SIGKILLed while rank 0 waits in a barrier: whether rank 0 records its gloo
    error before the launcher stops it is a race; the verdict must not depend on it."""
    (tmp_path / TORCHRUN_LOG).write_text(KILLED_RANK_1)
    noisy = find_root_cause(tmp_path, [PEER_GONE], "failed", 60.0, 2)
    quiet = find_root_cause(tmp_path, [], "failed", 60.0, 2)
    assert (noisy.rank, noisy.kind) == (quiet.rank, quiet.kind) == (1, "signal")
    assert "SIGKILL" in noisy.message


def test_a_silent_rank_with_no_launcher_report_is_still_the_hung_one(tmp_path: Path) -> None:
    found = find_root_cause(tmp_path, [PEER_GONE], "timeout", 60.0, 2)
    assert (found.rank, found.kind) == (1, "hang")
