"""A real `drill` command that parks in the middle of its work until a signal arrives, for the
signal tests (issue 25, item 9): `python -m tests.support.signal_child WHERE ARGV...` runs
drill.cli.main.main(ARGV) and, at WHERE, prints PARKED on stderr and waits for a signal:
- `backup-N`: in the N-th use (1-based) of SQLite's backup API, after its first page (the API
  copies one page per step here), half-way through the copy;
- `csv`: in `drill export csv`, after the header row reached the temporary file.
Its exit status is drill's."""

from __future__ import annotations

import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import storage.backup
from drill.cli.main import main

PARKED = "PARKED"


class _ParkingConnection:
    """A read-only source connection whose backup() stops after its first page."""

    calls = 0

    def __init__(self, conn: sqlite3.Connection, park_on: int) -> None:
        self._conn = conn
        self._park_on = park_on

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def backup(self, target: sqlite3.Connection, **_kwargs: Any) -> None:
        _ParkingConnection.calls += 1
        parking = _ParkingConnection.calls == self._park_on

        def progress(_status: int, remaining: int, _total: int) -> None:
            if parking and remaining > 0:
                _park()

        self._conn.backup(target, pages=1, progress=progress)


def _park() -> None:
    print(PARKED, file=sys.stderr, flush=True)
    signal.pause()  # the signal's handler raises here


def _park_in_backup(park_on: int) -> None:
    real = storage.backup.connect_readonly

    def connect(path: Path, timeout_s: float = 10.0) -> Any:
        return _ParkingConnection(real(path, timeout_s), park_on)

    storage.backup.connect_readonly = connect  # type: ignore[assignment]


def _park_in_csv() -> None:
    import drill.review.export_csv as export_csv

    real = export_csv._write_rows

    def write_rows(reviews: Any, handle: Any) -> None:
        real(reviews[:1], handle)
        handle.flush()
        _park()

    export_csv._write_rows = write_rows  # type: ignore[assignment]


if __name__ == "__main__":
    where = sys.argv[1]
    if where.startswith("backup-"):
        _park_in_backup(int(where.removeprefix("backup-")))
    elif where == "csv":
        _park_in_csv()
    sys.exit(main(sys.argv[2:]))
