"""Root cause of a failed torchrun launch (torch-free): the one place that decides which rank
broke a run, used by the launcher, the user-code harness and the labs.

`find_root_cause` (the launcher's rule): the earliest failure a rank recorded
(failures/rank{R}.json, written by trainer_lab.train.worker) that is not a peer's timeout noise;
else, when only noise was recorded, the ranks that recorded nothing (hung); else torchelastic's
error files; else, after a deadline or cancel, each rank's last output; else the exit signal or
code torchrun reported.

`rank_reports` + `root_cause_from_reports` (the hang lab's finer rule): one report per rank
(its error, classified, and the last collective it entered, from the events), then the first
real error across ranks; with only timeout noise, the late rank monitored_barrier named, the
rank(s) that never reached the collective the others were stuck in, or the minority whose
collective differs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.files import read_regular, read_tail
from trainer_lab.result import FAILURES_DIR, RootCauseInfo

TORCHRUN_LOG = "torchrun.log"
MAX_RECORD_BYTES = 4 * 1024**2  # a failure record or an error file: a traceback, some context
MAX_LOG_BYTES = 4 * 1024**2  # what is read of torchrun's log or a rank's output


@dataclass
class RootCause:
    rank: int | None
    kind: str  # exception | signal | exit | hang | planned (an injected fault)
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
            record = json.loads(read_regular(path, MAX_RECORD_BYTES))
        except (OSError, ValueError, RecursionError):
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


MAX_LINE_CHARS = 300  # of one log line quoted in a root cause


def _tail(path: Path, lines: int = 3) -> str:
    return _last_lines(_read(path), lines)


def _last_lines(text: str, lines: int) -> str:
    """The text's last lines, each cut to MAX_LINE_CHARS, joined by " | "."""
    return " | ".join(line[:MAX_LINE_CHARS] for line in text.strip().splitlines()[-lines:])


_FAILURE = re.compile(r"rank\s*:\s*(\d+) \(local_rank.*?exitcode\s*:\s*(-?\d+)", re.DOTALL)


def torchrun_exit_codes(run_dir: Path) -> dict[int, int]:
    """Exit code per failed rank from torchrun's failure report ("Failures" / "Root Cause")."""
    text = _read(run_dir / TORCHRUN_LOG)
    return {int(rank): int(code) for rank, code in _FAILURE.findall(text)}


def torchrun_root_cause_rank(run_dir: Path) -> int | None:
    """The rank torchrun's own report calls "Root Cause (first observed failure)": the first
    rank to exit with an error, often a peer that timed out rather than the culprit."""
    text = _read(run_dir / TORCHRUN_LOG)
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
        reported = _launcher_report(run_dir)
        if reported is not None and reported.rank in silent and reported.kind == "signal":
            # the silent rank did not hang: it died, and the peers' errors followed from that
            return reported
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
                data = json.loads(read_regular(error_file, MAX_RECORD_BYTES))["message"]
                message = data["message"] if isinstance(data, dict) else str(data)
                extra = data.get("extraInfo", {}) if isinstance(data, dict) else {}
                trace = extra.get("py_callstack", "")
                return RootCause(rank, "exception", message, trace)
            except (OSError, ValueError, RecursionError, KeyError, TypeError):
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
    reported = _launcher_report(run_dir)
    if reported is not None:
        return reported
    last = _last_lines(_read(run_dir / TORCHRUN_LOG), 3)
    return RootCause(None, "exit", f"torchrun failed: {last or 'no output'}")


def _launcher_report(run_dir: Path) -> RootCause | None:
    """The rank the launcher's "Root Cause" report names, and its signal or exit code (both
    launchers write that report to TORCHRUN_LOG); None when there is no such report."""
    log = _read(run_dir / TORCHRUN_LOG)
    if "Root Cause" not in log:
        return None
    root_part = log.split("Root Cause", 1)[-1]
    rank_match = _ROOT_RANK.search(root_part)
    exit_match = _ROOT_EXIT.search(root_part)
    signal_match = _SIGNAL.search(root_part)
    rank = int(rank_match.group(1)) if rank_match else None
    if signal_match:
        return RootCause(rank, "signal", f"killed by signal {signal_match.group(2)}")
    if exit_match:
        return RootCause(rank, "exit", f"exited with code {exit_match.group(1)}")
    last = _last_lines(log, 3)
    return RootCause(rank, "exit", f"torchrun failed: {last or 'no output'}")


# -- per-rank reports (the hang lab) --------------------------------------------------------------
# {"last": the rank's last "enter" event or None, "error": first error line or None,
#  "time": when (epoch seconds) or None, "kind": see error_kind, or abort | signal, or None}
RankReport = dict[str, Any]

_NAMED_RANKS = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier")
_WHAT = re.compile(r"what\(\):\s*(.*)")


def error_kind(message: str) -> str:
    """mismatch | late | peer-gone | timeout | exception, from a rank's error message."""
    if "Detected mismatch between collectives" in message:
        return "mismatch"
    if _NAMED_RANKS.search(message):
        return "late"
    if "monitoredBarrier" in message:  # a rank that arrived, waiting on rank 0's verdict
        return "peer-gone"
    if re.search(r"connection (reset|closed)", message, re.IGNORECASE):
        return "peer-gone"
    if re.search(r"timed out|timeout", message, re.IGNORECASE):
        return "timeout"
    return "exception"


def rank_reports(
    run_dir: Path,
    failures: list[dict[str, Any]],
    events: dict[int, list[dict[str, Any]]],
    world_size: int,
) -> dict[int, RankReport]:
    """Per rank: its failure record (if any), else a native abort seen in its stderr, else a
    fatal signal from torchrun's report; and its last collective (its last "enter" event)."""
    reports: dict[int, RankReport] = {}
    for rank in range(world_size):
        enters = [e for e in events.get(rank, []) if e["event"] == "enter"]
        last = enters[-1] if enters else None
        reports[rank] = {"last": last, "error": None, "time": None, "kind": None}
    for failure in failures:
        rank = failure["rank"]
        if reports.get(rank, {}).get("error") is None:
            message = f"{failure['type']}: {failure['message']}"
            reports[rank].update(error=message, time=failure["time"], kind=error_kind(message))
    for rank, files in rank_logs(run_dir).items():
        if rank not in reports or reports[rank]["error"] is not None:
            continue
        text = _read(files["stderr"])
        if "terminate called" in text or "Fatal Python error" in text:
            what = _WHAT.search(text)
            line = what.group(1).strip() if what else "Fatal Python error: Aborted"
            last_time = reports[rank]["last"]["time"] if reports[rank]["last"] else None
            reports[rank].update(error=f"native abort: {line}", time=last_time, kind="abort")
    for rank, code in torchrun_exit_codes(run_dir).items():
        # Killed by a signal other than torchrun's own SIGTERM: a real cause with no traceback.
        if rank in reports and reports[rank]["error"] is None and code < 0 and code != -15:
            last_time = reports[rank]["last"]["time"] if reports[rank]["last"] else None
            message = f"killed by signal {-code} (no traceback; exit code from torchrun's log)"
            reports[rank].update(error=message, time=last_time, kind="signal")
    return reports


def _read(path: Path) -> str:
    """A log's text (at most its last MAX_LOG_BYTES: its end holds the root cause and the last
    lines); "" when absent or not a regular file."""
    try:
        data, _ = read_tail(path, MAX_LOG_BYTES)
    except OSError:  # trainer_lab.files.FileRefused included
        return ""
    return data.decode("utf-8", errors="replace")


def _fingerprint(last: dict[str, Any] | None) -> tuple[Any, ...]:
    if last is None:
        return ("none",)
    return (last["step"], last["op"], tuple(last.get("shape", [])))


def root_cause_from_reports(reports: dict[int, RankReport], blame: str = "logs") -> dict[str, Any]:
    """The first real error across ranks; if only timeout noise, the rank(s) that did not reach
    the collective the others were stuck in, or whose collective differs from the majority.
    blame "first_error" is the naive reading: whichever rank raised first, timeouts included."""
    failed = sorted(
        (r for r, rep in reports.items() if rep["error"] is not None),
        key=lambda r: reports[r]["time"] or float("inf"),
    )
    if blame == "first_error" and failed:
        first = failed[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    real = [r for r in failed if reports[r]["kind"] in ("exception", "abort", "signal")]
    if real:
        first = real[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    late = [r for r in failed if reports[r]["kind"] == "late"]
    if late:
        named = named_late_ranks(reports[late[0]]["error"])
        return {
            "rank": named[0] if len(named) == 1 else None,
            "kind": "late",
            "message": reports[late[0]]["error"],
            "candidates": named,
        }
    prints = {r: _fingerprint(rep["last"]) for r, rep in reports.items()}
    furthest = max((p[0] for p in prints.values() if p[0] != "none"), default=None)
    behind = [r for r, p in prints.items() if p[0] == "none" or p[0] != furthest]
    if behind:
        return {
            "rank": behind[0] if len(behind) == 1 else None,
            "kind": "hang",
            "message": f"rank(s) {behind} never entered the step-{furthest} collective",
            "candidates": behind,
        }
    counts = Counter(prints.values())
    top = max(counts.values())
    minority = [r for r, p in prints.items() if counts[p] < top]
    ties = [r for r, p in prints.items() if counts[p] == top] if len(counts) > 1 else []
    candidates = minority or (ties if len(ties) == len(prints) else [])
    if candidates:
        detail = ", ".join(f"rank {r}: {prints[r][1]}{list(prints[r][2])}" for r in sorted(prints))
        return {
            "rank": candidates[0] if len(candidates) == 1 else None,
            "kind": "mismatch",
            "message": f"ranks called different collectives at step {furthest}: {detail}",
            "candidates": candidates,
        }
    if failed:
        first = failed[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    return {"rank": None, "kind": "unknown", "message": "no rank reported an error"}


def named_late_ranks(message: str | None) -> list[int]:
    """The ranks a monitored_barrier error names as late."""
    match = _NAMED_RANKS.search(message or "")
    if not match:
        return []
    return [int(x) for x in match.group(1).replace(" ", "").split(",") if x]


def seconds_to_failure(reports: dict[int, RankReport], ranks: list[int]) -> float | None:
    """Earliest (error time - time the rank entered its last collective) among `ranks`."""
    values = [
        reports[r]["time"] - reports[r]["last"]["time"]
        for r in ranks
        if reports[r]["time"] is not None and reports[r]["last"] is not None
    ]
    return round(min(values), 3) if values else None
