"""`python -m drill.review.optimize_worker --db PATH [--day-start-hour H] [--current JSON]`:
fit FSRS parameters to the review log in PATH, outside the app's process (see optimize.FitJob).

Protocol: one JSON object per line on stdout: {"event": "progress", "message": ...} while it
works, then exactly one {"event": "result", "result": FitResult.to_dict()} or {"event": "error",
"kind": "not-enough" | "failed", "message": ...}. The Rust fit prints its own chatter to stdout,
so the protocol gets a private copy of stdout and fd 1 is pointed at stderr.

The worker dies with its parent (tie_to_parent): a `drill optimize` killed with SIGKILL, or an
app that crashed, leaves no fit running behind it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _channel() -> TextIO:
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return channel


def _line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


PARENT_ENV = "DRILL_FIT_PARENT_PID"  # set by FitJob: the pid this worker must die with


def _expected_parent() -> int:
    try:
        return int(os.environ.get(PARENT_ENV, ""))
    except ValueError:
        return os.getppid()


def tie_to_parent(parent: int | None = None) -> None:
    """Die with the process that started this worker, however it ends (SIGKILL included): the
    kernel sends SIGKILL when the parent goes (Linux prctl PR_SET_PDEATHSIG); elsewhere, or
    if prctl is unavailable, a daemon thread checks the parent once a second. `parent` is
    the pid the starter named (PARENT_ENV): a parent that died before this line ran, or
    between the two checks, is noticed at once (the worker was re-parented)."""
    parent = _expected_parent() if parent is None else parent
    if not _pdeathsig():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it went between getppid and prctl
        os._exit(1)


def _pdeathsig() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def main(argv: list[str] | None = None) -> int:
    tie_to_parent()
    parser = argparse.ArgumentParser(prog="python -m drill.review.optimize_worker")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--day-start-hour", type=int, default=4)
    parser.add_argument("--current", default=None, help="JSON list of the parameters in use")
    args = parser.parse_args(argv)
    channel = _channel()

    def send(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message) + "\n")

    from drill.errors import DrillError
    from drill.review.optimize import NotEnoughReviews, OptimizeError, fit_parameters
    from storage.errors import DatabaseError

    try:
        current = json.loads(args.current) if args.current else None
        send({"event": "progress", "message": "reading the review log"})
        from drill.database import open_app_database
        from drill.review.review_log import read_review_log

        db = open_app_database(args.db)
        try:
            reviews = read_review_log(db)
        finally:
            db.close()
        result = fit_parameters(
            reviews,
            current=current,
            day_start_hour=args.day_start_hour,
            progress=lambda text: send({"event": "progress", "message": text}),
        )
    except NotEnoughReviews as error:
        send({"event": "error", "kind": "not-enough", "message": str(error),
              "items": error.items, "reviews": error.reviews, "needed": error.needed})  # fmt: skip
        return 1
    except OptimizeError as error:
        send({"event": "error", "kind": "failed", "message": _line(error)})
        return 1
    except (DrillError, DatabaseError) as error:  # bad settings, unreadable database: fixable
        send({"event": "error", "kind": "usage", "message": _line(error)})
        return 2
    except (ValueError, RuntimeError) as error:
        send({"event": "error", "kind": "failed", "message": _line(error)})
        return 1
    send({"event": "result", "result": result.to_dict()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
