"""Structured per-rank events: events-rank{R}.jsonl, one JSON object a line (torch-free)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode

PHASES = ("data_wait", "h2d", "forward", "backward", "grad_sync", "optimizer", "checkpoint")


def events_path(run_dir: Path, rank: int) -> Path:
    return run_dir / f"events-rank{rank}.jsonl"


class EventWriter:
    """Appends events for one rank; lines are flushed so a killed worker leaves whole lines."""

    def __init__(self, run_dir: Path, rank: int) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = events_path(run_dir, rank)
        self.rank = rank
        self._file: TextIO = self.path.open("a", encoding="utf-8")

    def write(self, event: str, **fields: Any) -> None:
        record = {"event": event, "rank": self.rank, "time": time.time(), **fields}
        self._file.write(_ENCODE(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def read_events(path: Path) -> list[dict[str, Any]]:
    """Events of one file; a torn last line (worker killed mid-write) is ignored."""
    if not path.exists():
        return []
    records: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def read_run_events(run_dir: Path) -> dict[int, list[dict[str, Any]]]:
    """All ranks' events of a run dir, keyed by rank."""
    result: dict[int, list[dict[str, Any]]] = {}
    for path in sorted(run_dir.glob("events-rank*.jsonl")):
        rank = int(path.stem.removeprefix("events-rank"))
        result[rank] = read_events(path)
    return result


def steps_of(events: list[dict[str, Any]], run: str | None = None) -> Iterator[dict[str, Any]]:
    """Training-step events, optionally only those tagged with a given run label."""
    for record in events:
        if record.get("event") == "step" and (run is None or record.get("run") == run):
            yield record
