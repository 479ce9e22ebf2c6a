"""Root cause of a failed torchrun launch (torch-free): the one place that decides which rank
broke a run, used by the launcher, the user-code harness and the labs.

The earliest failure a rank recorded (failures/rank{R}.json, written by trainer_lab.train.worker)
that is not a peer's timeout noise; else, when only noise was recorded, the ranks that recorded
nothing (hung); else torchelastic's error files; else, after a deadline or cancel, each rank's last
output; else the exit signal or code torchrun reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.result import FAILURES_DIR, RootCauseInfo

TORCHRUN_LOG = "torchrun.log"


@dataclass
class RootCause:
    rank: int | None
    kind: str  # exception | signal | exit | hang
    message: str
    traceback: str = ""

    def to_dict(self) -> RootCauseInfo:
        return {
            "rank": self.rank,
            "kind": self.kind,
            "message": self.message,
            "traceback": self.traceback,
        }

    def __str__(self) -> str:
        where = f"rank {self.rank}" if self.rank is not None else "launcher"
        return f"{where}: {self.message}"


def read_failures(run_dir: Path) -> list[dict[str, Any]]:
    """Failures recorded by the ranks, earliest first."""
    records = []
    for path in (run_dir / FAILURES_DIR).glob("rank*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _is_failure(record):
            records.append(record)
    return sorted(records, key=lambda r: r["time"])


def _is_failure(record: object) -> bool:
    """The shape trainer_lab.train.worker.write_failure writes (a user's script may write
    anything there: a malformed file is skipped, not a crash)."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("rank"), int)
        and isinstance(record.get("time"), int | float)
        and all(isinstance(record.get(key), str) for key in ("type", "message", "traceback"))
    )


def rank_logs(run_dir: Path) -> dict[int, dict[str, Path]]:
    """Per-rank stdout/stderr/error files of the last attempt under run_dir/logs."""
    found: dict[int, dict[str, Path]] = {}
    attempts = sorted(
        (run_dir / "logs").glob("*/attempt_*"), key=lambda p: int(p.name.split("_")[-1])
    )
    if not attempts:
        return found
    for rank_dir in attempts[-1].iterdir():
        if rank_dir.is_dir() and rank_dir.name.isdigit():
            found[int(rank_dir.name)] = {
                name: rank_dir / f"{name}.log" if name != "error" else rank_dir / "error.json"
                for name in ("stdout", "stderr", "error")
            }
    return found


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


_FAILURE = re.compile(r"rank\s*:\s*(\d+) \(local_rank.*?exitcode\s*:\s*(-?\d+)", re.DOTALL)


def torchrun_exit_codes(run_dir: Path) -> dict[int, int]:
    """Exit code per failed rank from torchrun's failure report ("Failures" / "Root Cause")."""
    try:
        text = (run_dir / TORCHRUN_LOG).read_text(errors="replace")
    except OSError:
        return {}
    return {int(rank): int(code) for rank, code in _FAILURE.findall(text)}


def torchrun_root_cause_rank(run_dir: Path) -> int | None:
    """The rank torchrun's own report calls "Root Cause (first observed failure)": the first
    rank to exit with an error, often a peer that timed out rather than the culprit."""
    try:
        text = (run_dir / TORCHRUN_LOG).read_text(errors="replace")
    except OSError:
        return None
    if "Root Cause" not in text:
        return None
    found = _ROOT_RANK.search(text.split("Root Cause", 1)[-1])
    return int(found.group(1)) if found else None


_SIGNAL = re.compile(r"Signal (\d+) \((\w+)\) received by PID (\d+)")
_ROOT_RANK = re.compile(r"rank\s*:\s*(\d+)")
_ROOT_EXIT = re.compile(r"exitcode\s*:\s*(-?\d+)")


# Messages of ranks that failed only because a peer failed or hung: timeout noise.
_NOISE = re.compile(
    r"timed out|timeout|connection reset|connection closed|broken pipe|"
    r"NCCL communicator was aborted|ProcessGroup.*(aborted|shut down)",
    re.IGNORECASE,
)


def is_noise(failure: dict[str, Any]) -> bool:
    return bool(_NOISE.search(f"{failure.get('type', '')}: {failure.get('message', '')}"))


def find_root_cause(
    run_dir: Path,
    failures: list[dict[str, Any]],
    status: str,
    timeout_s: float,
    world_size: int | None = None,
) -> RootCause:
    """The first real failure; a peer's collective timeout is reported only when nothing else
    failed, and then the ranks that recorded nothing are named as the likely hung ones."""
    primary = [f for f in failures if not is_noise(f)]
    if primary:
        first = primary[0]
        return RootCause(
            first["rank"], "exception", f"{first['type']}: {first['message']}", first["traceback"]
        )
    if failures:
        first = failures[0]
        failed = {f["rank"] for f in failures}
        silent = [r for r in range(world_size or 0) if r not in failed]
        if silent:
            names = ", ".join(str(r) for r in silent)
            return RootCause(
                silent[0],
                "hang",
                f"rank(s) {names} never reached the collective (hang); rank {first['rank']} gave "
                f"up waiting: {first['type']}: {first['message']}",
                first["traceback"],
            )
        return RootCause(
            first["rank"], "exception", f"{first['type']}: {first['message']}", first["traceback"]
        )
    for rank, files in sorted(rank_logs(run_dir).items()):
        error_file = files["error"]
        if error_file.exists():
            try:
                data = json.loads(error_file.read_text())["message"]
                message = data["message"] if isinstance(data, dict) else str(data)
                extra = data.get("extraInfo", {}) if isinstance(data, dict) else {}
                trace = extra.get("py_callstack", "")
                return RootCause(rank, "exception", message, trace)
            except (OSError, json.JSONDecodeError, KeyError, TypeError):
                continue
    if status in ("timeout", "cancelled"):
        tails = "; ".join(
            f"rank {rank}: {_tail(files['stdout'], 1) or '(no output)'}"
            for rank, files in sorted(rank_logs(run_dir).items())
        )
        what = "deadline" if status == "timeout" else "cancel"
        return RootCause(
            None,
            "hang" if status == "timeout" else "cancelled",
            f"{what} after {timeout_s:.0f} s with no rank failing; last output: {tails or 'none'}",
        )
    try:
        log = (run_dir / TORCHRUN_LOG).read_text(errors="replace")
    except OSError:
        log = ""
    root_part = log.split("Root Cause", 1)[-1] if "Root Cause" in log else ""
    rank_match = _ROOT_RANK.search(root_part)
    exit_match = _ROOT_EXIT.search(root_part)
    signal_match = _SIGNAL.search(root_part)
    rank = int(rank_match.group(1)) if rank_match else None
    if signal_match:
        return RootCause(rank, "signal", f"killed by signal {signal_match.group(2)}")
    if exit_match:
        return RootCause(rank, "exit", f"exited with code {exit_match.group(1)}")
    last = " | ".join(log.strip().splitlines()[-3:])
    return RootCause(rank, "exit", f"torchrun failed: {last or 'no output'}")
