"""Read what a run of user code left behind (torch-free): the recorder's JSON lines, the ranks'
stdout step lines and the stack dumps of a run killed at its deadline.

Everything here was written by (or next to) untrusted code: reads are capped, JSON is parsed
and shape-checked, nothing is executed or unpickled.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_lab.files import FileRefused, read_head, replace_file
from trainer_lab.usercode import protocol
from trainer_lab.usercode.protocol import TEARDOWN_S

READ_CAP_BYTES = 2 * 1024**2  # of any one file


def read_capped(
    path: Path, cap: int | None = None, refused: list[str] | None = None
) -> tuple[str, bool]:
    """(text, capped): at most `cap` bytes (default READ_CAP_BYTES) from the start of the file;
    ("", False) if absent or not a regular file (a FIFO, device, directory or symlink planted
    there is never waited on or followed: trainer_lab.files); the refusal's reason is appended
    to `refused` when given."""
    cap = READ_CAP_BYTES if cap is None else cap
    try:
        data, capped = read_head(path, cap)
    except FileRefused as error:
        if refused is not None:
            refused.append(str(error))
        return "", False
    except OSError:
        return "", False
    return data.decode("utf-8", errors="replace"), capped


def read_jsonl(path: Path, refused: list[str] | None = None) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file (other lines skipped); see read_capped."""
    text, _ = read_capped(path, 16 * READ_CAP_BYTES, refused)
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: hostile deep nesting
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def step_records(observe_dir: Path, rank: int) -> list[dict[str, Any]]:
    """The recorder's per-optimizer-step records of a rank, in step order."""
    records = [
        r
        for r in read_jsonl(observe_dir / protocol.steps_file(rank))
        if isinstance(r.get("pstep"), int) and isinstance(r.get("post"), dict)
    ]
    return sorted(records, key=lambda r: r["pstep"])


def fetches(observe_dir: Path, rank: int) -> list[tuple[int, int]]:
    """(optimizer steps done before the fetch, sample id) of a rank, in fetch order."""
    found = []
    for r in read_jsonl(observe_dir / protocol.fetch_file(rank)):
        if isinstance(r.get("pstep"), int) and isinstance(r.get("id"), int):
            found.append((r["pstep"], r["id"]))
    return found


def bypass_reads(observe_dir: Path, rank: int) -> int:
    """How many of a rank's reads came through the dataset module's reader from outside the
    dataset (drill_data._read called by the script, not dataset[i] / __getitems__)."""
    return sum(1 for r in read_jsonl(observe_dir / protocol.fetch_file(rank)) if r.get("bypass"))


def optimizer_records(observe_dir: Path, rank: int) -> dict[int, dict[str, Any]]:
    """Outermost optimizer step number -> class, learning rates, state digest before it."""
    return {
        r["n"]: r
        for r in read_jsonl(observe_dir / protocol.optimizer_file(rank))
        if isinstance(r.get("n"), int)
    }


def save_events(observe_dir: Path, ranks: list[int]) -> list[dict[str, Any]]:
    """save (torch.save) / write (a file closed with bytes) / create (a file closed empty: a
    commit marker) / fsync / rename / torn / killed records of the given ranks, each with its
    rank."""
    events = []
    for rank in ranks:
        for r in read_jsonl(observe_dir / protocol.saves_file(rank)):
            if isinstance(r.get("event"), str):
                events.append({**r, "rank": rank})
    return events


@dataclass
class StepLines:
    lines: list[dict[str, Any]] = field(default_factory=list)  # parsed step lines
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) not parsed
    other: int = 0  # lines that do not look like JSON
    capped: bool = False


def _is_step_line(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    step, loss = record.get("step"), record.get("loss")
    return (
        isinstance(step, int)
        and not isinstance(step, bool)
        and isinstance(loss, int | float)
        and not isinstance(loss, bool)
    )


def step_lines(stdout: Path) -> StepLines:
    """JSON step lines ({"step": int, "loss": number, ...}) printed to a rank's stdout."""
    text, capped = read_capped(stdout)
    found = StepLines(capped=capped)
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith("{"):
            found.other += 1 if stripped else 0
            continue
        try:
            record = json.loads(stripped, parse_constant=lambda name: math.nan)
        except (ValueError, RecursionError):
            found.bad.append((number, stripped[:120]))
            continue
        if _is_step_line(record):
            found.lines.append(record)
        else:
            found.bad.append((number, stripped[:120]))
    return found


_WRAPPERS = {"wrapper", "inner", "_fn", "fn", "decorate_context", "_wrapped_call_impl"}
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def where_stuck(stack_text: str, script: Path) -> str:
    """From a faulthandler dump: the script line a thread was in and what it was calling,
    e.g. "in barrier (torch.distributed) called at train.py:42"."""
    best = ""
    for block in stack_text.split("\n\n"):
        frames = [m.groupdict() for m in _FRAME.finditer(block)]  # most recent first
        for i, frame in enumerate(frames):
            if Path(frame["file"]).name != script.name:
                continue
            site = f"{script.name}:{frame['line']}"
            if i == 0:
                text = f"running {frame['func']} at {site}"
            else:
                callees = [f["func"] for f in reversed(frames[:i])]  # nearest the script first
                called = next((c for c in callees if c not in _WRAPPERS), callees[0])
                dist = any("torch/distributed" in f["file"] for f in frames[:i])
                text = f"in {called}{' (a collective)' if dist else ''} called at {site}"
            if not best or "collective" in text:
                best = text
            break
    return best


def hang_summary(observe_dir: Path, script: Path) -> dict[int, str]:
    """rank -> where it was stuck, from the stack dumps of a run killed at its deadline."""
    found: dict[int, str] = {}
    for path in sorted(observe_dir.glob("stack-rank*-*.txt")):
        match = re.match(r"stack-rank(\d+)-", path.name)
        if not match:
            continue
        text, _ = read_capped(path, 256 * 1024)
        where = where_stuck(text, script)
        if where:
            found[int(match.group(1))] = where
    return found


def write_events(run_dir: Path, observe_dir: Path, stdout_of: dict[int, Path]) -> list[Path]:
    """The lab result contract's per-rank events (events-rank{R}.jsonl in run_dir), from what the
    recorder saw: one step event per optimizer step with the ids fetched for it, the update size
    and the parameter digest; rank 0's printed step line adds loss, epoch and phase times.
    `step` is the script's own step number when its step lines show where it started."""
    from trainer_lab.result import events_file

    written = []
    for rank, stdout in sorted(stdout_of.items()):
        records = step_records(observe_dir, rank)
        if not records:
            continue
        printed = {line["step"]: line for line in step_lines(stdout).lines}
        offset = max(min(printed) - 1, 0) if printed else 0
        ids: dict[int, list[int]] = {}
        for done, sample in fetches(observe_dir, rank):
            ids.setdefault(done + 1, []).append(sample)
        lines = []
        for record in records:
            step = record["pstep"] + offset
            line = printed.get(step, {})
            phases = line.get("phases")
            event = {
                "event": "step",
                "rank": rank,
                "time": record.get("time"),
                "step": step,
                "epoch": line.get("epoch") if isinstance(line.get("epoch"), int) else None,
                "loss": line["loss"] if line and math.isfinite(line["loss"]) else None,
                "sample_ids": ids.get(record["pstep"], []),
                "phases": phases if isinstance(phases, dict) else {},
                "update_norm": record.get("update_norm"),
                "param_digest": record["post"].get("digest"),
            }
            lines.append(json.dumps(event, default=str) + "\n")
        path = run_dir / events_file(rank)
        replace_file(path, "".join(lines).encode())  # never opens what user code put there
        written.append(path)
    return written


ABORT_TEXT = "terminate called without an active exception"
ABORT_MARK = "Fatal Python error: Aborted"  # faulthandler's first line for a SIGABRT


def _dumps(observe_dir: Path, pattern: str) -> list[str]:
    """The non-empty faulthandler dumps matching pattern (an empty file, or one of NUL bytes:
    armed, never fired)."""
    found = []
    for path in sorted(observe_dir.glob(pattern)):
        text, _ = read_capped(path, 256 * 1024)
        if text.replace("\0", "").strip():
            found.append(text)
    return found


def crash_dumps(observe_dir: Path, rank: int) -> list[str]:
    """faulthandler's dumps of a rank's fatal signals."""
    return _dumps(observe_dir, f"crash-rank{rank}-*.txt")


def _end_record(observe_dir: Path, rank: int) -> dict[str, Any]:
    text, _ = read_capped(observe_dir / protocol.end_file(rank), 4096)
    try:
        record = json.loads(text) if text else None
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def script_ended(observe_dir: Path, rank: int) -> int | None:
    """The exit code the bootstrap recorded when the script returned (None: it never did)."""
    code = _end_record(observe_dir, rank).get("code")
    return code if isinstance(code, int) else None


def script_end_time(observe_dir: Path, rank: int) -> float | None:
    """When the script returned (time.time() of the bootstrap's end record; None: it never did)."""
    moment = _end_record(observe_dir, rank).get("time")
    return float(moment) if isinstance(moment, int | float) else None


def term_records(observe_dir: Path, rank: int) -> list[dict[str, Any]]:
    """The SIGTERMs the preemption fault sent a rank (usercode/sigterm.py), in order."""
    return [
        r
        for r in read_jsonl(observe_dir / protocol.term_file(rank))
        if isinstance(r.get("pstep"), int) and isinstance(r.get("time"), int | float)
    ]


def group_left_alive(observe_dir: Path, rank: int) -> bool:
    """Whether the script returned with torch.distributed's default process group still
    initialised (no destroy_process_group at the end)."""
    return _end_record(observe_dir, rank).get("group_alive") is True


def teardown_aborts(observe_dir: Path, ranks: list[int]) -> str | None:
    """A note when a failed run's only failures are the runtime's shutdown races: every rank
    either returned 0 from the script, aborted (SIGABRT) inside destroy_process_group or after
    the script returned, or was ended by the teardown guard while stuck after destroying its
    group; no fault was injected. None otherwise (the failure is the script's)."""
    if any(e["event"] in ("killed", "torn") for e in save_events(observe_dir, ranks)):
        return None
    aborted: list[str] = []
    hung: list[str] = []
    for rank in ranks:
        dumps = crash_dumps(observe_dir, rank)
        ended = script_ended(observe_dir, rank)
        if ended is None and teardown_dumps(observe_dir, rank):
            hung.append(f"rank {rank}")
            continue
        if not dumps:
            if ended != 0:
                return None
            continue
        if not all(ABORT_MARK in d for d in dumps):
            return None
        if ended == 0:
            aborted.append(f"rank {rank} after train.py returned")
        elif any("in destroy_process_group" in d for d in dumps):
            aborted.append(f"rank {rank} inside destroy_process_group")
        else:
            return None
    notes = []
    if aborted:
        notes.append(f"{', '.join(aborted)} aborted (SIGABRT, '{ABORT_TEXT}')")
    if hung:
        notes.append(
            f"{', '.join(hung)} stuck {TEARDOWN_S:.0f} s in gloo's teardown after "
            "destroy_process_group (the group's destructor waiting on its own thread) and ended"
        )
    if not notes:
        return None
    return (
        f"{'; '.join(notes)}: gloo's shutdown race after the script's work was done, not "
        "counted against it"
    )


def shutdown_race_end(observe_dir: Path, rank: int) -> float | None:
    """When a rank that never recorded its script's return was taken by gloo's shutdown race
    after destroying its group (teardown_aborts): the teardown guard wrote its dump TEARDOWN_S
    after destroy_process_group returned; an abort inside destroy_process_group wrote its crash
    dump as it happened. None when the rank returned, or ended another way."""
    if script_ended(observe_dir, rank) is not None:
        return None
    for path in sorted(observe_dir.glob(f"teardown-rank{rank}-*.txt")):
        if _dumps(observe_dir, path.name):
            return path.stat().st_mtime - TEARDOWN_S
    for path in sorted(observe_dir.glob(f"crash-rank{rank}-*.txt")):
        if any(
            ABORT_MARK in d and "in destroy_process_group" in d
            for d in _dumps(observe_dir, path.name)
        ):
            return path.stat().st_mtime
    return None


def teardown_dumps(observe_dir: Path, rank: int) -> list[str]:
    """Stacks the teardown guard (teardown.py) wrote when it ended a rank stuck after
    destroy_process_group."""
    return _dumps(observe_dir, f"teardown-rank{rank}-*.txt")
