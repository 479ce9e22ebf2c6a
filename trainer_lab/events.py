"""Structured per-rank events: events-rank{R}.jsonl, one JSON object a line (torch-free).

Durability: every event is stored into a shared memory map of the file (trainer_lab.mapped_log),
so once `write()` returns the line is in the kernel's page cache and survives a SIGKILL of the
worker (the hang and resume labs read a killed rank's last events). There is no Python-side
buffer to flush. A killed writer leaves NUL bytes after its last line: readers here skip them,
and the launcher trims them once the launch's processes are gone.

Step events (one per training step) take a preformatted fast path (`write_step`): most of the
reference trainer's instrumentation overhead was the cost of turning the record into a line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trainer_lab.files import read_head
from trainer_lab.mapped_log import open_log, release_log, trim
from trainer_lab.result import EVENTS_GLOB, events_file, events_rank

MAX_EVENTS_BYTES = 256 * 1024**2  # read of one events file (a long lab writes a few MiB)
_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode

PHASES = ("data_wait", "h2d", "forward", "backward", "grad_sync", "optimizer", "checkpoint")

# A step event's line with its fields in the order the generic encoder writes them. Phase
# durations are integer nanoseconds written as a JSON number in seconds ("68542e-9" parses to
# 6.8542e-05: the exact value to the nanosecond, perf_counter_ns's resolution) because
# formatting an int costs a fraction of formatting a float to nine decimals; the time is
# `time.time_ns()` written the same way. loss and lr use repr, the shortest string that parses
# back to the same float (losses are compared bit for bit across runs).
_STEP_FORMAT = (
    '{"event":"step","rank":%d,"time":%de-9,"step":%d,"epoch":%d,"loss":%s,"lr":%s,"sample_ids":%s,'
    '"phases":{' + ",".join(f'"{name}":%de-9' for name in PHASES) + "}%s}\n"
)


def events_path(run_dir: Path, rank: int) -> Path:
    return run_dir / events_file(rank)


def encode_fields(**fields: Any) -> str:
    """Extra fields pre-encoded as the tail of a step line: `,"run":"x"` ('' for none)."""
    return "".join(f",{_ENCODE(key)}:{_ENCODE(value)}" for key, value in fields.items())


def encode_step(
    rank: int,
    now_ns: int,
    step: int,
    epoch: int,
    loss: float,
    lr: float,
    sample_ids: list[int],
    phases_ns: Sequence[int],
    tail: str = "",
) -> str:
    """A step event's JSON line (newline included): the object write("step", ...) writes
    with phases in seconds, at a fraction of the generic encoder's cost.

    `now_ns` is `time.time_ns()`, `phases_ns` integer nanoseconds in PHASES order
    (differences of `perf_counter_ns`),
    `sample_ids` plain ints (as `Tensor.tolist()` gives), `tail` the extra fields from
    `encode_fields`.
    """
    # One % call does all the formatting: str() of a float is its repr, the shortest text that
    # parses back to the same float; str() of a list of ints is JSON ("[1, 2, 3]"). Non-finite
    # floats (x - x is not 0) take json's NaN/Infinity, which json.loads reads back.
    try:
        if loss - loss == 0 and lr - lr == 0:
            return _STEP_FORMAT % (
                rank, now_ns, step, epoch, loss, lr, sample_ids, *phases_ns, tail
            )  # fmt: skip
        loss_text, lr_text = _ENCODE(loss), _ENCODE(lr)
        return _STEP_FORMAT % (
            rank,
            now_ns,
            step,
            epoch,
            loss_text,
            lr_text,
            sample_ids,
            *phases_ns,
            tail,
        )
    except TypeError:  # checked only on failure: this runs once per training step
        if len(phases_ns) != len(PHASES):
            raise ValueError(f"expected {len(PHASES)} phase times ({', '.join(PHASES)})") from None
        raise


class EventWriter:
    """Appends events for one rank; each line is in the page cache when the call returns."""

    def __init__(self, run_dir: Path, rank: int) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = events_path(run_dir, rank)
        self.rank = rank
        self._log = open_log(self.path)
        self._append: Any = self._log.append  # bound once: write_step runs every training step

    def write(self, event: str, **fields: Any) -> None:
        record = {"event": event, "rank": self.rank, "time": time.time(), **fields}
        self._append((_ENCODE(record) + "\n").encode())

    def write_step(
        self,
        step: int,
        epoch: int,
        loss: float,
        lr: float,
        sample_ids: list[int],
        phases_ns: Sequence[int],
        tail: str = "",
    ) -> None:
        """A training step's event (see `encode_step`), timestamped now."""
        self._append(
            encode_step(
                self.rank, time.time_ns(), step, epoch, loss, lr, sample_ids, phases_ns, tail
            ).encode()
        )

    @property
    def closed(self) -> bool:
        return self._append is _closed

    def close(self) -> None:
        if self._append is not _closed:
            self._append = _closed
            release_log(self._log)

    def __del__(self) -> None:
        if getattr(self, "_append", _closed) is not _closed:
            self.close()


def _closed(data: bytes) -> None:
    raise ValueError("event writer is closed")


def trim_run_events(run_dir: Path) -> None:
    """Cut the NUL tails killed writers left in every events file under `run_dir` (call once
    the processes that wrote them are gone)."""
    for path in run_dir.rglob(EVENTS_GLOB):
        trim(path)


def read_events(path: Path) -> list[dict[str, Any]]:
    """Events of one file (at most its first MAX_EVENTS_BYTES); a torn last line (worker killed
    mid-write) and anything not a JSON object are ignored. A missing file, or one that is not a
    regular file (a FIFO, device or symlink planted there: trainer_lab.files), has none."""
    try:
        data, _ = read_head(path, MAX_EVENTS_BYTES)
    except OSError:  # FileRefused included
        return []
    records: list[dict[str, Any]] = []
    text = data.rstrip(b"\0").decode("utf-8", errors="replace")
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_run_events(run_dir: Path) -> dict[int, list[dict[str, Any]]]:
    """All ranks' events of a run dir, keyed by rank."""
    result: dict[int, list[dict[str, Any]]] = {}
    for path in sorted(run_dir.glob(EVENTS_GLOB)):
        rank = events_rank(path.name)
        if rank is not None:
            result[rank] = read_events(path)
    return result


def steps_of(events: list[dict[str, Any]], run: str | None = None) -> Iterator[dict[str, Any]]:
    """Training-step events, optionally only those tagged with a given run label."""
    for record in events:
        if record.get("event") == "step" and (run is None or record.get("run") == run):
            yield record
