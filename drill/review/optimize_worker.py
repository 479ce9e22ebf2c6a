"""`python -m drill.review.optimize_worker --db PATH [--day-start-hour H] [--current JSON]`:
fit FSRS parameters to the review log in PATH, outside the app's process (see optimize.FitJob).

Protocol: one JSON object per line on stdout: {"event": "progress", "message": ...} while it
works, then exactly one {"event": "result", "result": FitResult.to_dict()} or {"event": "error",
"kind": "not-enough" | "failed", "message": ...}. The Rust fit prints its own chatter to stdout,
so the protocol gets a private copy of stdout and fd 1 is pointed at stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO


def _channel() -> TextIO:
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return channel


def _line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


def main(argv: list[str] | None = None) -> int:
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
